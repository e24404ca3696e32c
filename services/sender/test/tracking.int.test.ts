// Open and click tracking end to end through the real gateway: an email sent with the resend SDK and
// delivered to a local MX sink, then its pixel and its links fetched with a real HTTP client on the domain's
// tracking host, the way a mail client, Gmail's image proxy and a security scanner would. The events arrive
// at a verifying webhook receiver. Tokens are sealed here as the composer seals them (createTrackingCipher
// with the system's POSTLINE_SECRET_KEY): the same tokens the sent HTML carries.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Kysely } from 'kysely';
import type { Resend } from 'resend';
import {
  dataOf,
  mimePartOf,
  createVerifiedDomain,
  nextSecond,
  observeBroker,
  startWebhookReceiver,
  verifyDelivery,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type ReceivedDelivery,
  type SinkMx,
  type VerifiedDomain,
  type WebhookReceiver,
  testResend,
  useSystem,
  type SharedSystem,
  uniqueDomain,
} from '@postline/testing';
import { createDb } from '@postline/platform';
import { SCHEMA as SENDER_SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';
import { SCANNER_CLICK_WINDOW_MS } from '../src/engagement/domain/engagement-signals.ts';
import { createTrackingCipher, TRACKING_PATHS, type TrackingKind } from '../src/engagement/domain/tracking-links.ts';

jest.setTimeout(60_000);

const SECRET_KEY = 'e2e-secret-key-not-for-production';
const RCPT = uniqueDomain('rcpt');
const CHROME =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const THUNDERBIRD = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.5.0';
const GMAIL_PROXY = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const SAFE_LINKS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Microsoft Office SafeLinks';

let system: SharedSystem;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let receiver: WebhookReceiver;
let signingSecret: string;
let db: Kysely<SenderDb>;
let resend: Resend;
let apiKey: string;
let domain: string;
const cipher = createTrackingCipher(SECRET_KEY);

const world = useSystem({ rcptDomain: RCPT });

beforeAll(async () => {
  ({ dns, sink, system } = world);
  expect(system.env.POSTLINE_SECRET_KEY).toBe(SECRET_KEY);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  db = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA }).db;
  const team = await system.admin('team', 'create', '--name', 'Tracking');
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  domain = (await createVerifiedDomain({ resend, dns, events, name: `${unique('t')}.example.com` })).name;
  receiver = await startWebhookReceiver();
  const hook = await resend.webhooks.create({ endpoint: receiver.url, events: ['email.opened', 'email.clicked'] });
  signingSecret = hook.data!.signing_secret;
}, 90_000);

afterAll(async () => {
  await db?.destroy();
  await receiver?.close();
  await events?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

/**
 * One request as a mail client or scanner makes it: to the gateway, with the Host of the domain's tracking
 * host, the client's user agent and (as the TLS proxy in front of us would) its address in x-forwarded-for.
 */
function hit(
  method: 'GET' | 'HEAD',
  path: string,
  userAgent: string,
  forwardedFor?: string,
  host = `links.${domain}`,
): Promise<Answer> {
  const url = new URL(path, system.apiUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method,
        headers: {
          host,
          'user-agent': userAgent,
          ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function pathOf(kind: TrackingKind, emailId: string, url: string | null = null): string {
  return `${TRACKING_PATHS[kind]}/${cipher.seal({ kind, emailId, url }, `links.${domain}`)}`;
}

/** Sends an email and waits until its recipient is delivered; returns its id. */
async function sentAndDelivered(): Promise<{ id: string }> {
  const { id } = dataOf(
    await resend.emails.send({
      from: `Acme <hello@${domain}>`,
      to: `ok@${RCPT}`,
      subject: 'Tracked',
      html: '<p>Read <a href="https://example.org/pricing?plan=pro">our prices</a></p>',
    }),
  );
  await waitFor(
    'the email delivered',
    async () => dataOf(await resend.emails.get(id)).last_event === 'delivered',
    30_000,
  );
  return { id };
}

/**
 * Moves an email's delivery (its delivered recipients' updated_at, which the scanner rule reads) back past
 * the scanner window, as if its reader came back to it later.
 */
async function backdateDelivery(emailId: string): Promise<void> {
  await db
    .updateTable('recipients')
    .set({ updated_at: new Date(Date.now() - SCANNER_CLICK_WINDOW_MS - 60_000) })
    .where('email_id', '=', emailId)
    .where('status', '=', 'delivered')
    .execute();
}

/** The verified webhook deliveries of `type` about one email. */
function deliveriesOf(type: string, emailId: string): ReceivedDelivery[] {
  const about = receiver.deliveries.filter((d) => d.json.type === type && d.json.data.email_id === emailId);
  for (const delivery of about) expect(verifyDelivery(delivery, signingSecret)).toBe(true);
  return about;
}

async function waitForDeliveries(type: string, emailId: string, count: number): Promise<ReceivedDelivery[]> {
  await receiver.waitFor(`${count} ${type} of ${emailId}`, () => deliveriesOf(type, emailId).length >= count);
  return deliveriesOf(type, emailId);
}

describe('the open pixel', () => {
  it("answers a 1×1 GIF at once; a mail client's open is a person's, Gmail's proxy a machine's", async () => {
    const { id } = await sentAndDelivered();
    const path = pathOf('open', id);

    const open = await hit('GET', path, THUNDERBIRD, '81.2.69.142');
    expect(open.status).toBe(200);
    expect(open.headers['content-type']).toBe('image/gif');
    expect(open.body.subarray(0, 6).toString('latin1')).toBe('GIF89a');
    expect([open.body.readUInt16LE(6), open.body.readUInt16LE(8)]).toEqual([1, 1]); // 1×1
    expect(open.headers['content-length']).toBe(String(open.body.length));
    expect(open.headers['cache-control']).toContain('no-store');
    expect(open.headers['x-postline-team-id']).toBeUndefined();

    const [opened] = await waitForDeliveries('email.opened', id, 1);
    expect(opened!.json.data).toMatchObject({
      email_id: id,
      to: [`ok@${RCPT}`],
      subject: 'Tracked',
      machine_open: false,
    });
    await waitFor('last_event opened', async () => dataOf(await resend.emails.get(id)).last_event === 'opened');

    expect((await hit('GET', path, GMAIL_PROXY, '66.102.8.1')).status).toBe(200);
    const both = await waitForDeliveries('email.opened', id, 2);
    expect(both.map((d) => d.json.data.machine_open).sort()).toEqual([false, true]);

    // HEAD answers the same headers without a body.
    const head = await hit('HEAD', path, THUNDERBIRD);
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    // A mail client shows an image with GET: the HEAD is a machine's.
    const all = await waitForDeliveries('email.opened', id, 3);
    expect(all.map((d) => d.json.data.machine_open).sort()).toEqual([false, true, true]);
  });
});

describe('the click redirect', () => {
  it('redirects to the sealed URL; a scanner right after delivery is flagged, a reader later is not', async () => {
    const { id } = await sentAndDelivered();
    const link = 'https://example.org/pricing?plan=pro&utm=%C3%A9';
    const path = pathOf('click', id, link);

    // Security gateways follow every link at once: a HEAD, and a GET naming the scanner.
    const probe = await hit('HEAD', path, CHROME, '52.96.10.1');
    expect(probe.status).toBe(302);
    expect(probe.headers.location).toBe(link);
    const scanner = await hit('GET', path, SAFE_LINKS, '52.96.10.2');
    expect(scanner.status).toBe(302);
    const scanned = await waitForDeliveries('email.clicked', id, 2);
    expect(scanned.map((d) => d.json.data.scanner_click)).toEqual([true, true]);

    // A person reads later: the delivery is moved back past the scanner window rather than waited out.
    await backdateDelivery(id);
    const before = Date.now();
    const click = await hit('GET', path, CHROME, '203.0.113.7');
    expect(click.status).toBe(302);
    expect(click.headers.location).toBe(link);
    expect(click.headers['referrer-policy']).toBe('no-referrer');
    expect(click.headers['x-postline-team-id']).toBeUndefined();

    const all = await waitForDeliveries('email.clicked', id, 3);
    const human = all.find((d) => d.json.data.scanner_click === false);
    expect(human?.json.data).toMatchObject({
      email_id: id,
      click: { ipAddress: '203.0.113.7', link, userAgent: CHROME },
      scanner_click: false,
    });
    const at = Date.parse(String((human!.json.data.click as { timestamp: string }).timestamp));
    expect(at).toBeGreaterThanOrEqual(before - 5);
    await waitFor('last_event clicked', async () => dataOf(await resend.emails.get(id)).last_event === 'clicked');
  });

  it('answers 404 and redirects nowhere for a tampered token, an open token, a non-web URL or a missing email', async () => {
    const { id } = await sentAndDelivered();
    const token = cipher.seal({ kind: 'click', emailId: id, url: 'https://example.org/' }, `links.${domain}`);
    const flipped = `${token.slice(0, 30)}${token[30] === 'A' ? 'B' : 'A'}${token.slice(31)}`;
    const refused = [
      `/c/${flipped}`,
      pathOf('open', id).replace('/o/', '/c/'),
      pathOf('click', id, 'javascript:alert(1)'),
      pathOf('click', '0192f1c4-7a3b-7c2d-8e4f-5a6b7c8d9e0f', 'https://example.org/'),
      `/c/${'A'.repeat(80)}`,
    ];
    for (const path of refused) {
      const answer = await hit('GET', path, CHROME);
      expect(answer.status).toBe(404);
      expect(answer.headers.location).toBeUndefined();
      expect(JSON.parse(answer.body.toString())).toMatchObject({ name: 'not_found' });
    }
    // A link of this team served on another team's tracking host names nothing there.
    const elsewhere = await hit(
      'GET',
      pathOf('click', id, 'https://example.org/'),
      CHROME,
      undefined,
      'links.other-team.example.com',
    );
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.headers.location).toBeUndefined();
    // Another method or another shape is not the tracking route.
    expect((await hit('GET', `/c/short`, CHROME)).headers.location).toBeUndefined();
    expect(deliveriesOf('email.clicked', id)).toEqual([]);
  });

  it('takes at most PUBLIC_LINK_RATE_LIMIT_PER_SECOND requests a second per link, each link apart', async () => {
    const { id } = await sentAndDelivered();
    const busy = pathOf('click', id, 'https://example.org/busy');
    const quiet = pathOf('click', id, 'https://example.org/quiet');
    await nextSecond();
    const statuses = await Promise.all(
      Array.from({ length: 14 }, () => hit('GET', busy, CHROME).then((a) => a.status)),
    );
    expect(statuses.filter((s) => s === 302).length).toBeLessThanOrEqual(10);
    expect(statuses).toContain(429);
    expect((await hit('GET', quiet, CHROME)).status).toBe(302);
  });

  it("answers 404 to a disabled team's pixel and links", async () => {
    const { id } = await sentAndDelivered();
    const row = await db.selectFrom('emails').select('team_id').where('id', '=', id).executeTakeFirstOrThrow();
    await system.admin('team', 'disable', '--team', row.team_id);
    try {
      // The gateways learn of the change through Postgres's NOTIFY, a moment after the command's commit.
      await waitFor(
        "the disabled team's pixel to be gone",
        async () => (await hit('GET', pathOf('open', id), CHROME)).status === 404,
      );
      expect((await hit('GET', pathOf('open', id), CHROME)).status).toBe(404);
      const click = await hit('GET', pathOf('click', id, 'https://example.org/'), CHROME);
      expect(click.status).toBe(404);
      expect(click.headers.location).toBeUndefined();
    } finally {
      await system.admin('team', 'enable', '--team', row.team_id);
    }
  });
});

describe("a broadcast's opens and clicks", () => {
  it('fill recipients?type=opened|clicked and clicked-links', async () => {
    const segment = dataOf(await resend.segments.create({ name: unique('news') })).id;
    const reader = `${unique('reader')}@${RCPT}`;
    const clicker = `${unique('clicker')}@${RCPT}`;
    for (const email of [reader, clicker]) dataOf(await resend.contacts.create({ email, segments: [{ id: segment }] }));
    const { id } = dataOf(
      await resend.broadcasts.create({
        segmentId: segment,
        from: `Acme <news@${domain}>`,
        subject: 'News',
        html: '<p><a href="https://example.org/news">News</a> <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
        send: true,
      }),
    );
    await waitFor('the broadcast sent', async () => dataOf(await resend.broadcasts.get(id)).status === 'sent', 30_000);
    await waitFor(
      'both delivered',
      async () => dataOf(await resend.broadcasts.recipients(id, { type: 'delivered' })).data.length === 2,
      30_000,
    );
    const rows = await db
      .selectFrom('broadcast_recipients')
      .select(['email', 'email_id'])
      .where('broadcast_id', '=', id)
      .execute();
    const emailOf = (address: string) => rows.find((row) => row.email === address)!.email_id!;

    expect(dataOf(await resend.broadcasts.recipients(id, { type: 'opened' })).data).toEqual([]);
    expect((await hit('GET', pathOf('open', emailOf(reader)), THUNDERBIRD)).status).toBe(200);
    expect((await hit('GET', pathOf('open', emailOf(reader)), THUNDERBIRD)).status).toBe(200);
    for (const url of ['https://example.org/news', 'https://example.org/news', 'https://example.org/other']) {
      expect((await hit('GET', pathOf('click', emailOf(clicker), url), CHROME)).status).toBe(302);
    }
    await waitForDeliveries('email.clicked', emailOf(clicker), 3);
    await waitForDeliveries('email.opened', emailOf(reader), 2);

    const opened = dataOf(await resend.broadcasts.recipients(id, { type: 'opened' })).data;
    expect(opened).toEqual([expect.objectContaining({ email: reader, count: 2 })]);
    const clicked = dataOf(await resend.broadcasts.recipients(id, { type: 'clicked' })).data;
    expect(clicked).toEqual([
      expect.objectContaining({
        email: clicker,
        count: 3,
        clicked_links: ['https://example.org/news', 'https://example.org/other'],
      }),
    ]);

    const res = await fetch(`${system.apiUrl}/broadcasts/${id}/clicked-links`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const links = (await res.json()) as { data: unknown[] };
    expect(links.data).toEqual([
      { id: expect.any(String), url: 'https://example.org/news', clicks: 2, unique_clicks: 1 },
      { id: expect.any(String), url: 'https://example.org/other', clicks: 1, unique_clicks: 1 },
    ]);
  });
});

/** A verified domain with open and click tracking on `links.<name>`, its CNAME published and verified. */
async function trackingVerifiedDomain(): Promise<VerifiedDomain> {
  const verified = await createVerifiedDomain({ resend, dns, events, name: `${unique('tv')}.example.com` });
  dns.set(`links.${verified.name}`, [{ type: 'CNAME', target: 'track.postline.test' }]);
  const since = events.messages.length;
  dataOf(
    await resend.domains.update({
      id: verified.id,
      openTracking: true,
      clickTracking: true,
      trackingSubdomain: 'links',
    }),
  );
  await resend.domains.verify(verified.id);
  await events.waitFor(
    `${verified.name} tracking verified`,
    (m) =>
      m.routingKey === 'internal.domain.state' &&
      m.envelope.data.domain_id === verified.id &&
      m.envelope.data.tracking_verified === true,
    { timeoutMs: 30_000, since },
  );
  // The sender's read model follows the state asynchronously.
  await waitFor(`the sender to hold ${verified.name}'s tracking`, async () => {
    const row = await db
      .selectFrom('sending_domains')
      .selectAll()
      .where('domain_id', '=', verified.id)
      .executeTakeFirst();
    return row?.open_tracking === true && row.click_tracking && row.tracking_verified === true;
  });
  return verified;
}

describe("a broadcast's clicked links", () => {
  it('page 20 at a time without a limit, with after and before on their ids, never both', async () => {
    const segment = dataOf(await resend.segments.create({ name: unique('links') })).id;
    const clicker = `${unique('many')}@${RCPT}`;
    dataOf(await resend.contacts.create({ email: clicker, segments: [{ id: segment }] }));
    const { id } = dataOf(
      await resend.broadcasts.create({
        segmentId: segment,
        from: `Acme <news@${domain}>`,
        subject: 'Links',
        html: '<p><a href="https://example.org/">Home</a> <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
        send: true,
      }),
    );
    await waitFor(
      'the broadcast delivered',
      async () => dataOf(await resend.broadcasts.recipients(id, { type: 'delivered' })).data.length === 1,
      30_000,
    );
    const [row] = await db
      .selectFrom('broadcast_recipients')
      .select('email_id')
      .where('broadcast_id', '=', id)
      .execute();
    const emailId = String(row?.email_id);
    // 21 links, the first clicked most: the order is by clicks, then by URL.
    const urls = Array.from({ length: 21 }, (_, i) => `https://example.org/${String(i).padStart(2, '0')}`);
    for (const url of [urls[0]!, ...urls]) {
      expect((await hit('GET', pathOf('click', emailId, url), CHROME)).status).toBe(302);
    }
    await waitForDeliveries('email.clicked', emailId, 22);

    type LinkPage = { status: number; body: { has_more: boolean; data: { id: string; url: string }[] } };
    const page = async (query: string): Promise<LinkPage> => {
      const res = await fetch(`${system.apiUrl}/broadcasts/${id}/clicked-links${query}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      return { status: res.status, body: (await res.json()) as LinkPage['body'] };
    };
    const first = await page('');
    expect(first.status).toBe(200);
    expect(first.body.has_more).toBe(true);
    expect(first.body.data.map((link) => link.url)).toEqual(urls.slice(0, 20));
    const ids = first.body.data.map((link) => link.id);
    expect((await page(`?after=${ids[19]}`)).body).toMatchObject({ has_more: false, data: [{ url: urls[20] }] });
    expect((await page(`?after=${ids[0]}&limit=2`)).body).toMatchObject({
      has_more: true,
      data: [{ url: urls[1] }, { url: urls[2] }],
    });
    expect((await page(`?before=${ids[2]}&limit=1`)).body).toMatchObject({ has_more: true, data: [{ url: urls[1] }] });
    const both = await page(`?after=${ids[0]}&before=${ids[2]}`);
    expect(both.status).toBe(422);
    expect((await page('?after=not-a-link-id')).status).toBe(422);
  });
});

describe('a sent email followed by a mail client, a scanner and a reader', () => {
  it("its received pixel and link give a reader's open, a scanner's clicks and then a reader's click", async () => {
    const tracked = await trackingVerifiedDomain();
    const to = `${unique('e2e')}@${RCPT}`;
    const link = 'https://example.org/pricing?plan=pro&seats=5';
    const { id } = dataOf(
      await resend.emails.send({
        from: `Acme <hello@${tracked.name}>`,
        to,
        subject: 'Tracked end to end',
        html: '<html><body><p>Read <a href="https://example.org/pricing?plan=pro&amp;seats=5">our prices</a>.</p></body></html>',
      }),
    );
    await waitFor(`a message to ${to}`, () => sink.messages.some((m) => m.to.includes(to)), 30_000);
    await waitFor(
      'the email delivered',
      async () => dataOf(await resend.emails.get(id)).last_event === 'delivered',
      30_000,
    );
    // What the recipient received: the link rewritten to the tracking host, the pixel added, nothing else.
    const html = mimePartOf(sink.messages.find((m) => m.to.includes(to))!.raw, 'text/html') ?? '';
    const pixels = [...html.matchAll(/<img src="(https:\/\/[^/"]+\/o\/[A-Za-z0-9_-]+)"/g)].map((m) => new URL(m[1]!));
    const links = [...html.matchAll(/<a href="(https:\/\/[^/"]+\/c\/[A-Za-z0-9_-]+)">our prices<\/a>/g)].map(
      (m) => new URL(m[1]!),
    );
    expect(pixels).toHaveLength(1);
    expect(links).toHaveLength(1);
    const [pixel, tracking] = [pixels[0]!, links[0]!];
    expect([pixel.host, tracking.host]).toEqual([`links.${tracked.name}`, `links.${tracked.name}`]);
    expect(html).not.toContain('example.org');

    // A desktop mail client on a home connection shows the images: a person's open.
    const open = await hit('GET', pixel.pathname, THUNDERBIRD, '81.2.69.142', pixel.host);
    expect(open.status).toBe(200);
    expect(open.headers['content-type']).toBe('image/gif');
    expect(open.body.subarray(0, 6).toString('latin1')).toBe('GIF89a');
    const [opened] = await waitForDeliveries('email.opened', id, 1);
    expect(opened!.json.data).toMatchObject({
      email_id: id,
      to: [to],
      subject: 'Tracked end to end',
      machine_open: false,
    });

    // The recipient's security gateway follows the link at once: a HEAD probe, then a GET naming Safe Links.
    const probe = await hit('HEAD', tracking.pathname, CHROME, '52.96.10.1', tracking.host);
    expect(probe.status).toBe(302);
    expect(probe.headers.location).toBe(link);
    const scanner = await hit('GET', tracking.pathname, SAFE_LINKS, '52.96.10.2', tracking.host);
    expect(scanner.status).toBe(302);
    expect(scanner.headers.location).toBe(link);
    const scanned = await waitForDeliveries('email.clicked', id, 2);
    expect(scanned.map((d) => d.json.data.scanner_click)).toEqual([true, true]);
    expect(scanned.map((d) => (d.json.data.click as { link: string }).link)).toEqual([link, link]);

    // The person clicks later, past the scanner window after delivery (moved back rather than waited out).
    await backdateDelivery(id);
    const before = Date.now();
    const click = await hit('GET', tracking.pathname, CHROME, '203.0.113.7', tracking.host);
    expect(click.status).toBe(302);
    expect(click.headers.location).toBe(link);
    const all = await waitForDeliveries('email.clicked', id, 3);
    const human = all.filter((d) => d.json.data.scanner_click === false);
    expect(human).toHaveLength(1);
    expect(human[0]!.json.data).toMatchObject({
      email_id: id,
      to: [to],
      click: { ipAddress: '203.0.113.7', link, userAgent: CHROME },
      scanner_click: false,
    });
    const at = Date.parse(String((human[0]!.json.data.click as { timestamp: string }).timestamp));
    expect(at).toBeGreaterThanOrEqual(before - 5);
    await waitFor('last_event clicked', async () => dataOf(await resend.emails.get(id)).last_event === 'clicked');
  });
});
