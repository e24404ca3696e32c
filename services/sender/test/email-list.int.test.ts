// GET /emails's filters (Postline extensions: last event, from, to, subject, sending domain, broadcast, time
// range), their CSV export, GET /emails/{id}/recipients and GET /emails/{id}/insights, through the real gateway and sender, with emails the file's MX
// delivers (250) or refuses (550 5.1.1 for `hard…` addresses).
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Resend } from 'resend';
import { createDb } from '@postline/platform';
import { createVerifiedDomain, dataOf, testResend, useSystem, waitFor, type SharedSystem } from '@postline/testing';
import { SCHEMA as SENDER_SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';
import { exportEmails } from '../src/emails/db/emails.ts';

jest.setTimeout(90_000);

const world = useSystem();
let system: SharedSystem;
let apiKey: string;
let resend: Resend;
let otherKey: string;
const stamp = Date.now().toString(36);
const sent: Record<'invoice' | 'bounce' | 'copied' | 'scheduled' | 'percent', string> = {
  invoice: '',
  bounce: '',
  copied: '',
  scheduled: '',
  percent: '',
};
let mainDomain: { id: string; name: string };
let otherDomain: { id: string; name: string };
let startedAt: string;

type Answer = { status: number; body: Record<string, unknown> };

async function get(path: string, key = apiKey): Promise<Answer> {
  const r = await fetch(`${system.apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** The ids GET /emails answers for `query`, newest first. */
async function listed(query: Record<string, string>): Promise<string[]> {
  const r = await get(`/emails?${new URLSearchParams({ limit: '100', ...query }).toString()}`);
  expect(r.status).toBe(200);
  return (r.body.data as { id: string }[]).map((e) => e.id);
}

async function lastEvent(id: string): Promise<string> {
  return String((await get(`/emails/${id}`)).body.last_event);
}

beforeAll(async () => {
  ({ system } = world);
  const team = await system.admin('team', 'create', '--name', 'Lists of emails');
  apiKey = String(team.api_key);
  otherKey = String((await system.admin('team', 'create', '--name', 'Elsewhere')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  const verify = (name: string) => createVerifiedDomain({ resend, dns: world.dns, env: system.env, name });
  mainDomain = await verify(`list-${stamp}.example.com`);
  otherDomain = await verify(`list-other-${stamp}.example.com`);
  // After the domains' probe emails (createVerifiedDomain sends one to see the sender accept the domain).
  startedAt = new Date().toISOString();
  const rcpt = world.rcptDomain;
  const send = async (options: Partial<Parameters<Resend['emails']['send']>[0]>) =>
    dataOf(
      await resend.emails.send({
        from: `Acme <hello@${mainDomain.name}>`,
        to: `ok-${stamp}@${rcpt}`,
        subject: 'Hello',
        text: 'Hello',
        ...options,
      } as Parameters<Resend['emails']['send']>[0]),
    ).id;
  sent.invoice = await send({ to: `Reader-${stamp}@${rcpt}`, subject: `Invoice 42 ${stamp}` });
  sent.bounce = await send({ to: `hard-${stamp}@${rcpt}`, subject: `Welcome aboard ${stamp}` });
  sent.copied = await send({
    from: `Other <news@${otherDomain.name}>`,
    cc: `copy-${stamp}@${rcpt}`,
    subject: `Newsletter ${stamp}`,
  });
  sent.scheduled = await send({
    subject: `Later ${stamp}`,
    scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
  });
  sent.percent = await send({
    subject: `100% off ${stamp}`,
    tags: [
      { name: 'category', value: 'promo' },
      { name: 'wave', value: stamp },
    ],
  });
  // Another team's email with a subject that matches: never listed here.
  await testResend(otherKey, system.apiUrl).emails.send({
    from: `x@${mainDomain.name}`,
    to: `ok-${stamp}@${rcpt}`,
    subject: `Invoice 42 ${stamp}`,
    text: 'x',
  });
  await waitFor('the deliveries and the bounce', async () => {
    const events = await Promise.all([sent.invoice, sent.bounce].map(lastEvent));
    return events[0] === 'delivered' && events[1] === 'bounced';
  });
}, 120_000);

describe('GET /emails filters', () => {
  it('narrows by last event, recipient (to or cc, any case), sender, subject words and sending domain', async () => {
    expect(await listed({ last_event: 'bounced', created_after: startedAt })).toEqual([sent.bounce]);
    expect(await listed({ last_event: 'scheduled', created_after: startedAt })).toEqual([sent.scheduled]);
    expect(await listed({ to: `reader-${stamp}@${world.rcptDomain}`.toUpperCase() })).toEqual([sent.invoice]);
    expect(await listed({ to: `copy-${stamp}@${world.rcptDomain}` })).toEqual([sent.copied]);
    expect(await listed({ from: `NEWS@${otherDomain.name}` })).toEqual([sent.copied]);
    // A mailbox with its name, as an address book gives it, names the same address.
    expect(await listed({ to: `Reader <reader-${stamp}@${world.rcptDomain}>` })).toEqual([sent.invoice]);
    expect(await listed({ from: `Other <news@${otherDomain.name}>` })).toEqual([sent.copied]);
    expect(await listed({ subject: `invoice 42 ${stamp}` })).toEqual([sent.invoice]);
    // `%` and `_` in the words are matched as they are, not as patterns.
    expect(await listed({ subject: `100% off ${stamp}` })).toEqual([sent.percent]);
    expect(await listed({ subject: `1_0% off ${stamp}` })).toEqual([]);
    expect(await listed({ domain_id: otherDomain.id, created_after: startedAt })).toEqual([sent.copied]);
    // A tag by name and value, or by name alone.
    expect(await listed({ tag: `wave=${stamp}` })).toEqual([sent.percent]);
    expect(await listed({ tag: 'category', created_after: startedAt })).toEqual([sent.percent]);
    expect(await listed({ tag: 'category=other', created_after: startedAt })).toEqual([]);
    expect(await listed({ broadcast_id: randomUUID(), created_after: startedAt })).toEqual([]);
    // Together: every filter applies.
    expect(await listed({ subject: stamp, last_event: 'delivered', domain_id: mainDomain.id })).toEqual(
      expect.arrayContaining([sent.invoice]),
    );
    expect(await listed({ subject: stamp, domain_id: mainDomain.id })).not.toContain(sent.copied);
  });

  it('narrows by time, and pages through a filtered list', async () => {
    const mine = await listed({ created_after: startedAt });
    expect(mine).toEqual([sent.percent, sent.scheduled, sent.copied, sent.bounce, sent.invoice]);
    expect(await listed({ created_after: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    expect(await listed({ created_before: startedAt, subject: stamp })).toEqual([]);

    const first = await get(`/emails?limit=2&subject=${stamp}`);
    expect(first.body.has_more).toBe(true);
    const page = (first.body.data as { id: string }[]).map((e) => e.id);
    expect(page).toEqual([sent.percent, sent.scheduled]);
    const next = await get(`/emails?limit=2&subject=${stamp}&after=${page[1]}`);
    expect((next.body.data as { id: string }[]).map((e) => e.id)).toEqual([sent.copied, sent.bounce]);
  });

  it('narrows by the API key that sent the email, and links each email to its request’s log', async () => {
    const [key] = dataOf(await resend.apiKeys.list()).data;
    const second = dataOf(await resend.apiKeys.create({ name: `second ${stamp}` }));
    const byOther = dataOf(
      await testResend(second.token, system.apiUrl).emails.send({
        from: `hello@${mainDomain.name}`,
        to: `ok-${stamp}@${world.rcptDomain}`,
        subject: `Second key ${stamp}`,
        text: 'x',
      }),
    ).id;
    const ofKey = await listed({ subject: stamp, api_key_id: key!.id });
    expect(ofKey).toEqual(expect.arrayContaining([sent.invoice, sent.bounce, sent.copied]));
    expect(ofKey).not.toContain(byOther);
    expect(await listed({ subject: stamp, api_key_id: second.id })).toEqual([byOther]);

    const email = (await get(`/emails/${byOther}`)).body;
    expect(email).toMatchObject({ api_key_id: second.id, request_id: expect.any(String) });
    let log: Answer = { status: 0, body: {} };
    // The gateway writes its request logs a moment after the answer.
    await waitFor(
      'the request’s log',
      async () => (log = await get(`/logs/${String(email.request_id)}`)).status === 200,
    );
    expect(log.body).toMatchObject({ method: 'POST', endpoint: '/emails', response_body: { id: byOther } });
  });

  it('refuses a filter it cannot read with a clear 422', async () => {
    for (const [query, field] of [
      ['last_event=arrived', 'last_event'],
      ['created_after=yesterday', 'created_after'],
      ['domain_id=nope', 'domain_id'],
      ['tag==value', 'tag'],
      [`subject=${'x'.repeat(201)}`, 'subject'],
      ['api_key_id=key_1', 'api_key_id'],
    ] as const) {
      const r = await get(`/emails?${query}`);
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ name: 'validation_error' });
      expect(String(r.body.message)).toContain(field);
    }
  });
});

describe('GET /emails/{id}/recipients', () => {
  it('tells each recipient’s state, attempts and its server’s last reply', async () => {
    const delivered = await get(`/emails/${sent.invoice}/recipients`);
    expect(delivered.status).toBe(200);
    expect(delivered.body.object).toBe('list');
    expect(delivered.body.data).toEqual([
      expect.objectContaining({
        address: `Reader-${stamp}@${world.rcptDomain}`,
        status: 'delivered',
        attempts: 1,
        last_code: 250,
        bounce_type: null,
      }),
    ]);
    const bounced = (await get(`/emails/${sent.bounce}/recipients`)).body.data as Record<string, unknown>[];
    expect(bounced).toEqual([expect.objectContaining({ status: 'bounced', last_code: 550, bounce_type: 'Permanent' })]);
    expect(String(bounced[0]!.last_response)).toContain('5.1.1');
    const copied = (await get(`/emails/${sent.copied}/recipients`)).body.data as { address: string }[];
    expect(copied.map((r) => r.address)).toEqual([
      `ok-${stamp}@${world.rcptDomain}`,
      `copy-${stamp}@${world.rcptDomain}`,
    ]);
    const waiting = (await get(`/emails/${sent.scheduled}/recipients`)).body.data as { status: string }[];
    expect(waiting.map((r) => r.status)).toEqual(['pending']);
  });

  it('answers 404 for another team’s email and for an id that is none', async () => {
    expect((await get(`/emails/${sent.invoice}/recipients`, otherKey)).status).toBe(404);
    const none = await get('/emails/nope/recipients');
    expect(none).toMatchObject({ status: 404, body: { name: 'not_found' } });
  });
});

describe('GET /emails/{id}/insights', () => {
  type Insight = { id: string; group: string; passed: boolean; detail: string };
  const insightsOf = async (id: string) => (await get(`/emails/${id}/insights`)).body.data as Insight[];
  const failing = (insights: Insight[]) => insights.filter((i) => !i.passed).map((i) => i.id);

  it('passes a well-made email from a domain with DMARC, and says what to fix on one that is not', async () => {
    world.dns.add(`_dmarc.${mainDomain.name}`, [{ type: 'TXT', value: 'v=DMARC1; p=none' }]);
    const send = async (from: string, html: string, text?: string) =>
      dataOf(
        await resend.emails.send({
          from,
          to: `ok-${stamp}@${world.rcptDomain}`,
          subject: `Insights ${stamp}`,
          html,
          ...(text === undefined ? {} : { text }),
        } as Parameters<Resend['emails']['send']>[0]),
      ).id;
    const good = await send(
      `hello@${mainDomain.name}`,
      `<p>Your order</p><a href="https://${mainDomain.name}/orders/1">See it</a><img src="https://${mainDomain.name}/l.png" alt="Logo">`,
    );
    const poor = await send(
      `news@${otherDomain.name}`,
      '<p>Deal</p><a href="https://bit.ly/deal">Get it</a><img src="https://cdn.example.net/x.png">',
      '',
    );
    const clean = await insightsOf(good);
    expect(clean.map((i) => [i.id, i.group])).toEqual([
      ['dmarc_record', 'needs_attention'],
      ['html_size', 'needs_attention'],
      ['list_unsubscribe', 'needs_attention'],
      ['text_part', 'could_improve'],
      ['link_domains', 'could_improve'],
      ['tracking_domain', 'could_improve'],
      ['image_alt', 'could_improve'],
    ]);
    expect(failing(clean)).toEqual([]);
    const poorInsights = await insightsOf(poor);
    expect(failing(poorInsights)).toEqual(['dmarc_record', 'text_part', 'link_domains', 'image_alt']);
    expect(poorInsights.find((i) => i.id === 'link_domains')!.detail).toContain('bit.ly');
    expect((await get(`/emails/${poor}/insights`, otherKey)).status).toBe(404);
  });
});

describe('GET /emails/export', () => {
  it('streams every email the filters select as CSV, newest first, and refuses a bad filter as JSON', async () => {
    const r = await fetch(
      `${system.apiUrl}/emails/export?created_after=${encodeURIComponent(startedAt)}&domain_id=${mainDomain.id}`,
      {
        headers: { authorization: `Bearer ${apiKey}` },
      },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="emails.csv"');
    const bytes = Buffer.from(await r.arrayBuffer());
    // A UTF-8 byte-order mark first, so that spreadsheets read the text as UTF-8.
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = bytes.subarray(3).toString('utf8').split('\r\n');
    expect(lines[0]).toBe('id,created_at,from,to,cc,bcc,subject,last_event,scheduled_at,message_id,tags');
    const ids = lines.slice(1, -1).map((line) => line.split(',')[0]);
    // Newest first, this domain's only (the other domain's email is not in it, nor another team's).
    const mine = await listed({ created_after: startedAt, domain_id: mainDomain.id });
    expect(ids).toEqual(mine);
    expect(ids).toContain(sent.invoice);
    expect(ids).not.toContain(sent.copied);
    expect(lines.at(-1)).toBe('');
    expect(lines.find((line) => line.startsWith(sent.percent))).toContain(`100% off ${stamp}`);

    const bad = await get('/emails/export?last_event=arrived');
    expect(bad).toMatchObject({ status: 422, body: { name: 'validation_error' } });
  });

  it('reads an export a page at a time, whatever its size', async () => {
    const { db } = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA, max: 1 });
    try {
      const teamId = String(
        (await db.selectFrom('emails').select('team_id').where('id', '=', sent.invoice).executeTakeFirstOrThrow())
          .team_id,
      );
      const pages: string[][] = [];
      for await (const page of exportEmails(db, teamId, { subject: stamp }, 2)) pages.push(page.map((e) => e.id));
      const all = await listed({ subject: stamp });
      expect(pages.flat()).toEqual(all);
      expect(pages.length).toBe(Math.ceil(all.length / 2));
      expect(pages.every((p) => p.length <= 2)).toBe(true);
    } finally {
      await db.destroy();
    }
  });
});
