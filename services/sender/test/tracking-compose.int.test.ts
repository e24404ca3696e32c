// Open and click tracking at send time, end to end: a domain whose tracking subdomain is verified through the
// domain-verifier (its CNAME published in the fake DNS), an email sent with the official resend SDK through
// the gateway, and the message as the recipient's MX receives it: links rewritten to the tracking host with
// tokens that open to the original URLs, the pixel before </body>, the text part as written, DKIM passing.
// With tracking asked for but not verified, or not asked for, the html goes out exactly as sent.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { Resend } from 'resend';
import type { Kysely } from 'kysely';
import {
  mimePartOf,
  createVerifiedDomain,
  observeBroker,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type SinkMx,
  type VerifiedDomain,
  testResend,
  useSystem,
  type SharedSystem,
  uniqueDomain,
} from '@postline/testing';
import { createDb } from '@postline/platform';
import { SCHEMA as SENDER_SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';
import { createTrackingCipher, type TrackingCipher } from '../src/engagement/domain/tracking-links.ts';

jest.setTimeout(60_000);

const RCPT = uniqueDomain('rcpt');
const TRACKING_HOST = 'track.postline.test';

let system: SharedSystem;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let resend: Resend;
let db: Kysely<SenderDb>;
let destroyDb: () => Promise<void>;
let cipher: TrackingCipher;
let publicBaseUrl: string;

const world = useSystem({ rcptDomain: RCPT, env: { POSTLINE_DELAY_SCALE: '0.00002' } });

beforeAll(async () => {
  ({ dns, sink, system } = world);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const team = await system.admin('team', 'create', '--name', 'Tracking');
  resend = testResend(String(team.api_key), system.apiUrl);
  const created = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA });
  db = created.db;
  destroyDb = () => created.db.destroy();
  // The system's own key: the tokens in the messages must open with it.
  cipher = createTrackingCipher(String(system.env.POSTLINE_SECRET_KEY));
  publicBaseUrl = String(system.env.PUBLIC_BASE_URL);
}, 90_000);

afterAll(async () => {
  await destroyDb?.();
  await events?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;

/** A verified domain with open and click tracking asked for on `links.<name>`, its records published or not. */
async function trackingDomain(publish: boolean): Promise<VerifiedDomain> {
  const domain = await createVerifiedDomain({ resend, dns, events, name: `${unique('t')}.example.com` });
  if (publish) dns.set(`links.${domain.name}`, [{ type: 'CNAME', target: TRACKING_HOST }]);
  const since = events.messages.length;
  const updated = await resend.domains.update({
    id: domain.id,
    openTracking: true,
    clickTracking: true,
    trackingSubdomain: 'links',
  });
  expect(updated.error).toBeNull();
  if (publish) {
    await resend.domains.verify(domain.id);
    await events.waitFor(
      `${domain.name} tracking verified`,
      (m) =>
        m.routingKey === 'internal.domain.state' &&
        m.envelope.data.domain_id === domain.id &&
        m.envelope.data.tracking_verified === true,
      { timeoutMs: 30_000, since },
    );
  }
  // The sender's read model follows the state asynchronously.
  await waitFor(`the sender to hold ${domain.name}'s tracking`, async () => {
    const row = await db
      .selectFrom('sending_domains')
      .selectAll()
      .where('domain_id', '=', domain.id)
      .executeTakeFirst();
    return (
      row?.open_tracking === true &&
      row.click_tracking &&
      row.tracking_subdomain === 'links' &&
      row.tracking_verified === publish
    );
  });
  return domain;
}

let tracked: Promise<VerifiedDomain> | undefined;
/** The one domain with tracking verified, made on first use. */
const trackedDomain = () => (tracked ??= trackingDomain(true));

const HTML = (unsubscribe: string) =>
  '<html><body><p>Hi <a href="https://shop.example.com/offer?a=1&amp;b=2">the offer</a>, ' +
  "<A class=cta HREF='http://example.org/Path'>this</A>, " +
  '<a href="mailto:help@example.com">mail us</a>, <a href="#top">top</a>, ' +
  '<a data-postline-no-track href="https://example.net/private">private</a>, ' +
  `<a href="${unsubscribe}">unsubscribe</a>` +
  '<!-- <a href="https://example.com/commented">x</a> --></p></body></html>';

/** Sends `html` (and `text`, when given) from `domain` to a fresh recipient; returns the email id and the message received. */
async function sendAndReceive(domain: string, html: string, text?: string) {
  const to = `${unique('r')}@${RCPT}`;
  const { data, error } = await resend.emails.send({
    from: `Acme <hello@${domain}>`,
    to,
    subject: 'Tracked',
    html,
    ...(text === undefined ? {} : { text }),
  });
  if (error || !data) throw new Error(JSON.stringify(error));
  await waitFor(`a message to ${to}`, () => sink.messages.some((m) => m.to.includes(to)), 20_000);
  const raw = sink.messages.find((m) => m.to.includes(to))!.raw;
  return { id: data.id, raw, html: mimePartOf(raw, 'text/html'), text: mimePartOf(raw, 'text/plain') };
}

async function expectDkimPass(raw: Buffer, domain: VerifiedDomain): Promise<void> {
  const selector = /s=([^;\s]+)/.exec(raw.toString('latin1'))?.[1];
  const result = await dkimVerify(raw, {
    resolver: (name: string, type: string) => {
      if (type === 'TXT' && name === `${selector}._domainkey.${domain.name}`)
        return Promise.resolve([[domain.dkimRecord]]);
      return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    },
  });
  expect(result.results[0]?.status.result).toBe('pass');
  expect(result.results[0]?.signingDomain).toBe(domain.name);
}

describe('tracking at send time', () => {
  it('with tracking verified, rewrites the http(s) links to sealed tracking links and adds the pixel; DKIM signs what is sent', async () => {
    const domain = await trackedDomain();
    const unsubscribe = `${publicBaseUrl}/unsubscribe/not-a-real-token`;
    const html = HTML(unsubscribe);
    const { id, raw, html: sent, text } = await sendAndReceive(domain.name, html);
    await expectDkimPass(raw, domain);

    const host = `links.${domain.name}`.replaceAll('.', '\\.');
    const clicks = [...(sent ?? '').matchAll(new RegExp(`https://${host}/c/([A-Za-z0-9_-]+)`, 'g'))].map((m) =>
      cipher.open(m[1] as string, 'click', `links.${domain.name}`),
    );
    expect(clicks).toEqual([
      { kind: 'click', emailId: id, url: 'https://shop.example.com/offer?a=1&b=2' },
      { kind: 'click', emailId: id, url: 'http://example.org/Path' },
    ]);
    // Everything but the two hrefs and the pixel is as sent: the other links, the comment, the markup.
    const pixel = new RegExp(
      `<img src="https://${host}/o/([A-Za-z0-9_-]+)" width="1" height="1" alt="" border="0" style="[^"]*" />`,
    );
    const opened = pixel.exec(sent ?? '');
    expect(cipher.open(opened?.[1] as string, 'open', `links.${domain.name}`)).toEqual({
      kind: 'open',
      emailId: id,
      url: null,
    });
    const restored = (sent ?? '')
      .replace(pixel, '')
      .replace(new RegExp(`https://${host}/c/[A-Za-z0-9_-]+`), 'https://shop.example.com/offer?a=1&amp;b=2')
      .replace(new RegExp(`https://${host}/c/[A-Za-z0-9_-]+`), 'http://example.org/Path');
    expect(restored).toBe(html);
    expect((sent ?? '').endsWith(`${opened?.[0]}</body></html>`)).toBe(true);

    // The text part made from the html shows the original links, not the tracking ones.
    expect(text).toContain('https://shop.example.com/offer?a=1&b=2');
    expect(text).not.toContain(`links.${domain.name}`);

    // A text part given is sent as given.
    const given = await sendAndReceive(
      domain.name,
      '<p><a href="https://example.com/x">x</a></p>',
      'See https://example.com/x',
    );
    expect(given.text).toBe('See https://example.com/x');
    expect(given.html).toMatch(new RegExp(`^<p><a href="https://${host}/c/[A-Za-z0-9_-]+">x</a></p><img [^>]+/>$`));
    await expectDkimPass(given.raw, domain);
  });

  it("in a broadcast, tracks the links but not the contact's unsubscribe link", async () => {
    const domain = await trackedDomain();
    const segmentId = (await resend.segments.create({ name: unique('seg') })).data?.id as string;
    const to = `${unique('c')}@${RCPT}`;
    expect((await resend.contacts.create({ email: to, segments: [{ id: segmentId }] })).error).toBeNull();
    const created = await resend.broadcasts.create({
      segmentId,
      from: `Acme <news@${domain.name}>`,
      subject: 'News',
      html: '<p><a href="https://example.com/news">News</a> <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
      send: true,
    } as Parameters<Resend['broadcasts']['create']>[0]);
    expect(created.error).toBeNull();
    await waitFor(`the broadcast at ${to}`, () => sink.messages.some((m) => m.to.includes(to)), 30_000);
    const raw = sink.messages.find((m) => m.to.includes(to))!.raw;
    const sent = mimePartOf(raw, 'text/html') ?? '';
    const host = `links.${domain.name}`.replaceAll('.', '\\.');
    const token = new RegExp(`<a href="https://${host}/c/([A-Za-z0-9_-]+)">News</a>`).exec(sent)?.[1];
    expect(cipher.open(token as string, 'click', `links.${domain.name}`)?.url).toBe('https://example.com/news');
    expect(sent).toMatch(
      new RegExp(`<a href="${publicBaseUrl}/unsubscribe/[A-Za-z0-9_-]{64}\\.[A-Za-z0-9_-]{22}">Unsubscribe</a>`),
    );
    expect(sent).toMatch(new RegExp(`<img src="https://${host}/o/[A-Za-z0-9_-]+" `));
    await expectDkimPass(raw, domain);
  });

  it('with tracking asked for but its records not verified, sends the html exactly as given', async () => {
    const domain = await trackingDomain(false);
    const html = HTML(`${publicBaseUrl}/unsubscribe/x`);
    const { raw, html: sent } = await sendAndReceive(domain.name, html);
    expect(sent).toBe(html);
    await expectDkimPass(raw, domain);
  });

  it('with tracking off, sends the html exactly as given', async () => {
    const domain = await createVerifiedDomain({ resend, dns, events, name: `${unique('n')}.example.com` });
    const html = HTML(`${publicBaseUrl}/unsubscribe/x`);
    const { raw, html: sent, text } = await sendAndReceive(domain.name, html);
    expect(sent).toBe(html);
    expect(text).toContain('https://shop.example.com/offer?a=1&b=2');
    await expectDkimPass(raw, domain);
  });
});
