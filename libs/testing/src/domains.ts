import type { Resend } from 'resend';
import type { DnsServer } from './dns.ts';
import { observeBroker, type BrokerObserver } from './observe.ts';
import { waitFor } from './wait.ts';

export type VerifiedDomain = {
  name: string;
  id: string;
  /** The DKIM TXT value the API showed (`p=…`). */
  dkimRecord: string;
  /** Every record name published in the fake DNS (remove them to make the domain fail its next check). */
  recordNames: string[];
};

/**
 * Creates a sending domain through the API, publishes its records in the fake DNS as a customer would,
 * verifies it, and returns once the sender accepts mail from it (its read model is updated asynchronously).
 * Record names are relative to `example.com`, so `name` must be a subdomain of it. It watches the domain's
 * state (`internal.domain.state` on the events exchange) on `events`, or, given a system's `env` instead
 * (AMQP_URL, BROKER_PREFIX), on an observer of that system's broker of its own.
 *
 * @example
 * const domain = await createVerifiedDomain({ resend, dns, events, name: 'acme.example.com' });
 * const other = await createVerifiedDomain({ resend, dns, env: system.env, name: 'news.example.com' });
 */
export async function createVerifiedDomain(
  opts: { resend: Resend; dns: DnsServer; name: string } & ({ events: BrokerObserver } | { env: NodeJS.ProcessEnv }),
): Promise<VerifiedDomain> {
  if ('events' in opts) return verify(opts.resend, opts.dns, opts.events, opts.name);
  const events = await observeBroker({
    amqpUrl: String(opts.env.AMQP_URL),
    prefix: String(opts.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  try {
    return await verify(opts.resend, opts.dns, events, opts.name);
  } finally {
    await events.close();
  }
}

async function verify(resend: Resend, dns: DnsServer, events: BrokerObserver, name: string): Promise<VerifiedDomain> {
  const { data, error } = await resend.domains.create({ name });
  if (error || !data) throw new Error(`create ${name}: ${JSON.stringify(error)}`);
  let dkimRecord = '';
  const recordNames: string[] = [];
  for (const r of data.records) {
    const fqdn = `${r.name}.example.com`;
    recordNames.push(fqdn);
    if (r.type === 'MX') dns.add(fqdn, [{ type: 'MX', exchange: r.value, priority: r.priority ?? 10 }]);
    else dns.add(fqdn, [{ type: 'TXT', value: r.value }]);
    if (r.record === 'DKIM') dkimRecord = r.value;
  }
  await resend.domains.verify(data.id);
  await events.waitFor(
    `${name} sending verified`,
    (m) =>
      m.routingKey === 'internal.domain.state' &&
      m.envelope.data.domain_id === data.id &&
      m.envelope.data.sending_verified === true,
    // A check that meets a DNS timeout on a saturated machine is retried a few seconds later.
    { timeoutMs: 60_000 },
  );
  await waitFor(`the sender to accept mail from ${name}`, async () => {
    const sent = await resend.emails.send({
      from: `probe@${name}`,
      to: 'delivered@postline.test',
      subject: 'probe',
      text: 'probe',
    });
    return sent.error === null;
  });
  return { name, id: data.id, dkimRecord, recordNames };
}
