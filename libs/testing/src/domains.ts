import type { Resend } from 'resend';
import type { DnsServer } from './dns.ts';
import type { BrokerObserver } from './observe.ts';
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
 * Record names are relative to `example.com`, so `name` must be a subdomain of it.
 *
 * @example
 * const domain = await createVerifiedDomain({ resend, dns, events, name: 'acme.example.com' });
 */
export async function createVerifiedDomain(opts: {
  resend: Resend;
  dns: DnsServer;
  /** Observes `internal.domain.state` on the events exchange. */
  events: BrokerObserver;
  name: string;
}): Promise<VerifiedDomain> {
  const { resend, dns, events, name } = opts;
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
    { timeoutMs: 20_000 },
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
