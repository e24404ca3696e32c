// Domains end to end: the official resend SDK through the real gateway, the real domain-verifier and
// scheduler processes (of the run's shared system), RabbitMQ and Postgres, and a real DNS server (over
// UDP/TCP) standing in for the customer's DNS. POSTLINE_DELAY_SCALE shrinks the schedule: the first check
// ~1 ms after creation, the 72 h window to ~5 s (moved back in the database rather than waited out), the
// 6 h re-check of verified domains to ~0.4 s.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import type { Resend } from 'resend';
import { sql, type Kysely } from 'kysely';
import { createDb, createSecretBox } from '@postline/platform';
import {
  observeBroker,
  useSystem,
  type BrokerObserver,
  type DnsServer,
  type ObservedMessage,
  type SharedSystem,
  waitFor,
  nudgeUntil,
  testResend,
} from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import type { DomainsDb } from '../src/db/schema.ts';

jest.setTimeout(60_000);

const SCALE = 0.00002;
const WINDOW_MS = 72 * 3600 * 1000 * SCALE;
const MX_HOST = 'inbound.postline.test';
const SPF = 'v=spf1 include:_spf.postline.test ~all';
const TRACKING_HOST = 'track.postline.test';
const TRACKING_CAA = '0 issue "letsencrypt.org"';

let system: SharedSystem;
let dns: DnsServer;
let events: BrokerObserver;
let resend: Resend;
let apiKey: string;
let teamId: string;
let db: Kysely<DomainsDb>;

const world = useSystem({ env: { POSTLINE_DELAY_SCALE: String(SCALE) } });

beforeAll(async () => {
  ({ dns, system } = world);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [
      { exchange: 'events', pattern: 'domain.*' },
      { exchange: 'events', pattern: 'internal.domain.state' },
      { exchange: 'commands', pattern: 'scheduler.cancel-timer' },
    ],
  });
  const team = await system.admin('team', 'create', '--name', 'Domains');
  apiKey = String(team.api_key);
  teamId = String(team.team_id);
  resend = testResend(apiKey, system.apiUrl);
  db = createDb<DomainsDb>({ url: String(system.env.DATABASE_URL), schema: SCHEMA }).db;
}, 90_000);

afterAll(async () => {
  await db?.destroy();
  await events?.close();
}, 30_000);

let counter = 0;
function uniqueDomain(): string {
  return `d${Date.now().toString(36)}${counter++}.example.com`;
}

async function create(name: string, options: Partial<Parameters<Resend['domains']['create']>[0]> = {}) {
  const { data, error } = await resend.domains.create({ name, ...options });
  if (error || !data) throw new Error(`create ${name}: ${JSON.stringify(error)}`);
  return data;
}

type Records = { record: string; name: string; type: string; value: string; status: string; priority?: number }[];

async function get(id: string) {
  const { data, error } = await resend.domains.get(id);
  if (error || !data) throw new Error(`get ${id}: ${JSON.stringify(error)}`);
  return { ...data, records: data.records as Records };
}

/** Publishes every record the API shows, as the customer would, in our fake DNS. */
function publish(name: string, records: Records): void {
  for (const r of records) {
    const fqdn = r.record === 'Receiving' ? r.name : `${r.name}.example.com`;
    dns.add(fqdn, [
      r.type === 'MX' ? { type: 'MX', exchange: r.value, priority: r.priority ?? 10 } : { type: 'TXT', value: r.value },
    ]);
  }
  expect(name).toBeTruthy();
}

type Match = (data: Record<string, unknown>) => boolean;

/** Starts the search windows of `ids` `agoMs` before now. */
async function moveWindows(ids: string[], agoMs: number): Promise<void> {
  await sql`update domains set window_started_at = now() - make_interval(secs => ${agoMs / 1000})
    where id = any(${ids}::uuid[])`.execute(db);
}

function domainEvent(type: string, id: string, match: Match = () => true, since = 0) {
  const matches = (m: ObservedMessage) => m.routingKey === type && m.envelope.data.id === id && match(m.envelope.data);
  return events.waitFor(`${type} for ${id}`, matches, { timeoutMs: 30_000, since });
}

function stateEvent(id: string, match: Match, since = 0) {
  const matches = (m: ObservedMessage) =>
    m.routingKey === 'internal.domain.state' && m.envelope.data.domain_id === id && match(m.envelope.data);
  return events.waitFor(`domain state for ${id}`, matches, { timeoutMs: 30_000, since });
}

async function call(method: string, path: string, body?: unknown, key = apiKey) {
  const r = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('domains API', () => {
  it('creates a domain with its own DKIM key, return-path MX and SPF records, then gets, lists, updates and removes it', async () => {
    const name = uniqueDomain();
    const created = await create(name);
    expect(created).toMatchObject({
      name,
      status: 'not_started',
      region: 'us-east-1',
      capabilities: { sending: 'enabled', receiving: 'disabled' },
    });
    expect(created).not.toHaveProperty('object');
    expect(created.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+\+00$/);
    const records = created.records as Records;
    expect(records.map((r) => [r.record, r.type, r.name])).toEqual([
      ['DKIM', 'TXT', expect.stringMatching(new RegExp(`^postline-[a-z2-7]{8}\\._domainkey\\.${name.split('.')[0]}$`))],
      ['SPF', 'MX', `send.${name.split('.')[0]}`],
      ['SPF', 'TXT', `send.${name.split('.')[0]}`],
    ]);
    expect(records[1]).toMatchObject({ value: MX_HOST, priority: 10, ttl: 'Auto' });
    expect(records[2]).toMatchObject({ value: SPF });
    const publicKey = createPublicKey({
      key: Buffer.from(records[0]!.value.replace(/^p=/, ''), 'base64'),
      format: 'der',
      type: 'spki',
    });
    expect(publicKey.asymmetricKeyType).toBe('rsa');
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);

    const one = await get(created.id);
    expect(one).toMatchObject({ object: 'domain', id: created.id, name, open_tracking: false, click_tracking: false });
    expect(one.records.map((r) => r.value)).toEqual(records.map((r) => r.value));

    const list = await resend.domains.list();
    const item = list.data?.data.find((d) => d.id === created.id);
    expect(item).toEqual({
      id: created.id,
      name,
      status: expect.any(String),
      created_at: created.created_at,
      region: 'us-east-1',
      open_tracking: false,
      click_tracking: false,
      capabilities: { sending: 'enabled', receiving: 'disabled' },
    });

    const updated = await resend.domains.update({ id: created.id, openTracking: true, tls: 'enforced' });
    expect(updated).toMatchObject({ data: { object: 'domain', id: created.id }, error: null });
    expect((await get(created.id)).open_tracking).toBe(true);
    await stateEvent(created.id, (d) => d.tls === 'enforced' && d.open_tracking === true);

    const removed = await resend.domains.remove(created.id);
    expect(removed).toMatchObject({ data: { object: 'domain', id: created.id, deleted: true }, error: null });
    expect((await resend.domains.get(created.id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    const deleted = await domainEvent('domain.deleted', created.id);
    expect(deleted.envelope.data).toMatchObject({ name, records: expect.any(Array) });
    await stateEvent(created.id, (d) => d.deleted === true);
    const cancelled = (m: ObservedMessage) =>
      m.routingKey === 'scheduler.cancel-timer' && m.envelope.data.key === `domain-check:${created.id}`;
    await events.waitFor('timer cancelled', cancelled);
  });

  it('publishes domain.created with the records and no secret, and seals the private key for the sender', async () => {
    const created = await create(uniqueDomain());
    const event = await domainEvent('domain.created', created.id);
    expect(event.envelope.team_id).toBe(teamId);
    expect(event.envelope.data).toMatchObject({
      id: created.id,
      status: 'not_started',
      records: expect.arrayContaining([expect.objectContaining({ record: 'DKIM' })]),
    });
    expect(JSON.stringify(event.envelope)).not.toMatch(/PRIVATE KEY|private_key/i);

    const state = await stateEvent(created.id, () => true);
    const sealed = String(state.envelope.data.dkim_private_key_encrypted);
    expect(sealed).not.toContain('PRIVATE KEY');
    const pem = createSecretBox(String(system.env.POSTLINE_SECRET_KEY)).open(sealed);
    const privateKey = createPrivateKey(pem);
    const dkim = (created.records as Records).find((r) => r.record === 'DKIM')!;
    const publicKey = createPublicKey({ key: Buffer.from(dkim.value.slice(2), 'base64'), format: 'der', type: 'spki' });
    const signature = sign('sha256', Buffer.from('message'), privateKey);
    expect(verify('sha256', Buffer.from('message'), publicKey, signature)).toBe(true);
    expect(state.envelope.data).toMatchObject({
      team_id: teamId,
      return_path: `send.${created.name}`,
      sending_verified: false,
      deleted: false,
    });
    // Never in an API response either.
    const shown = JSON.stringify(await get(created.id));
    expect(shown).not.toContain('PRIVATE KEY');
    expect(shown).not.toContain(sealed);
  });

  it('refuses invalid names, public suffixes, IPs, a taken name, a bad region and no capability, with named errors', async () => {
    for (const name of ['not a domain', 'localhost', 'co.uk', 'github.io', '203.0.113.7', 'https://example.com/x']) {
      const r = await call('POST', '/domains', { name });
      expect({ name, status: r.status, error: r.body.name }).toEqual({ name, status: 422, error: 'validation_error' });
      expect(r.body.message).toMatch(/`name`/);
    }
    expect(await call('POST', '/domains', {})).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field', message: 'Missing `name` field.' },
    });
    const name = uniqueDomain();
    await create(name);
    const again = await resend.domains.create({ name: name.toUpperCase() });
    expect(again.error).toEqual({
      statusCode: 403,
      name: 'validation_error',
      message: `The \`${name}\` domain has been registered already.`,
    });
    const other = await system.admin('team', 'create', '--name', 'Other');
    const otherTry = await call('POST', '/domains', { name }, String(other.api_key));
    expect(otherTry).toMatchObject({ status: 403, body: { name: 'validation_error' } });
    expect(await call('POST', '/domains', { name: uniqueDomain(), region: 'mars-1' })).toMatchObject({
      status: 422,
      body: { name: 'invalid_region' },
    });
    expect(
      await call('POST', '/domains', {
        name: uniqueDomain(),
        capabilities: { sending: 'disabled', receiving: 'disabled' },
      }),
    ).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    expect(await call('POST', '/domains', { name: uniqueDomain(), custom_return_path: 'bad path' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('POST', '/domains', { name: uniqueDomain(), tls: 'sometimes' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
  });

  it("answers 404 for another team's domain and for a malformed id, on every route", async () => {
    const created = await create(uniqueDomain());
    const other = String((await system.admin('team', 'create', '--name', 'Stranger')).api_key);
    for (const [method, path, body] of [
      ['GET', `/domains/${created.id}`, undefined],
      ['PATCH', `/domains/${created.id}`, { open_tracking: true }],
      ['POST', `/domains/${created.id}/verify`, undefined],
      ['DELETE', `/domains/${created.id}`, undefined],
    ] as const) {
      expect({ method, ...(await call(method, path, body, other)) }).toMatchObject({
        method,
        status: 404,
        body: { name: 'not_found' },
      });
      expect({ method, ...(await call(method, path.replace(created.id, 'nope'), body)) }).toMatchObject({
        method,
        status: 404,
      });
    }
    expect((await get(created.id)).open_tracking).toBe(false);
    expect((await call('GET', '/domains', undefined, other)).body).toEqual({
      object: 'list',
      has_more: false,
      data: [],
    });
  });

  it('lets a sending key be limited to a domain the team owns', async () => {
    const created = await create(uniqueDomain());
    const key = await resend.apiKeys.create({ name: 'limited', permission: 'sending_access', domain_id: created.id });
    expect(key.error).toBeNull();
    expect(key.data?.token).toMatch(/^pl_/);
  });
});

describe('verification', () => {
  it('goes pending while the records are missing, verified once they appear, and back when DKIM is removed', async () => {
    const name = uniqueDomain();
    const created = await create(name);
    await domainEvent('domain.updated', created.id, (d) => d.status === 'pending');
    const pending = await get(created.id);
    expect(pending.status).toBe('pending');
    expect(pending.records.map((r) => r.status)).toEqual(['pending', 'pending', 'pending']);

    publish(name, pending.records);
    const verified = await domainEvent('domain.updated', created.id, (d) => d.status === 'verified');
    const afterVerified = events.messages.indexOf(verified) + 1;
    expect((verified.envelope.data.records as Records).map((r) => r.status)).toEqual([
      'verified',
      'verified',
      'verified',
    ]);
    await stateEvent(created.id, (d) => d.status === 'verified' && d.sending_verified === true);
    expect((await get(created.id)).status).toBe('verified');

    // The periodic re-check of a verified domain notices the DKIM record is gone.
    const dkim = pending.records[0]!;
    dns.remove(`${dkim.name}.example.com`);
    const lost = await domainEvent('domain.updated', created.id, (d) => d.status !== 'verified', afterVerified);
    expect(lost.envelope.data.status).toBe('pending');
    expect((lost.envelope.data.records as Records).map((r) => [r.record, r.status])).toEqual([
      ['DKIM', 'pending'],
      ['SPF', 'verified'],
      ['SPF', 'verified'],
    ]);
    await stateEvent(created.id, (d) => d.status === 'pending' && d.sending_verified === false, afterVerified);
  });

  it('fails a domain whose records never appear after the (scaled) 72 hours, but never for a DNS timeout; verify revives it', async () => {
    const missing = await create(uniqueDomain());
    const timingOut = uniqueDomain();
    dns.fail(`send.${timingOut}`, 'timeout');
    const flaky = await create(timingOut);

    await domainEvent('domain.updated', flaky.id, (d) => d.status === 'temporary_failure');
    // The windows are moved back in the database instead of waited out. Inside its last seconds, checks
    // still find the missing domain not failed.
    const missingDkim = `${(await get(missing.id)).records[0]!.name}.example.com`.toLowerCase();
    await moveWindows([missing.id, flaky.id], WINDOW_MS - 3000);
    const inside = dns.queries.length;
    await waitFor(
      'two more checks of the missing domain',
      () => dns.queries.slice(inside).filter((query) => query.name === missingDkim).length >= 2,
    );
    expect((await get(missing.id)).status).not.toBe('failed');
    // Past it, they fail (a check in flight writes back the start it read, so the start is moved until then).
    const [failed] = await nudgeUntil(
      'both domains past their window',
      Promise.all([
        domainEvent('domain.updated', missing.id, (d) => d.status === 'failed'),
        domainEvent('domain.updated', flaky.id, (d) => (d.records as Records)[0]?.status === 'failed'),
      ]),
      () => moveWindows([missing.id, flaky.id], WINDOW_MS + 3_600_000),
      30_000,
    );
    expect((failed.envelope.data.records as Records).map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
    // The timing-out domain is past its window too: its missing DKIM record fails, the domain only
    // temporarily fails.
    const flakyNow = await get(flaky.id);
    expect(flakyNow.status).toBe('temporary_failure');
    expect(flakyNow.records.map((r) => r.status)).toEqual(['failed', 'temporary_failure', 'temporary_failure']);

    // A failed domain is not checked again on its own; POST /verify checks at once and opens a new window.
    const failedRecords = (await get(missing.id)).records;
    publish(missing.name, failedRecords);
    // The timing-out domain keeps being checked on its schedule: two more lookups of its DKIM record mean
    // at least one whole check interval has passed since the records appeared.
    const flakyDkim = `${flakyNow.records[0]!.name}.example.com`.toLowerCase();
    const since = dns.queries.length;
    await waitFor(
      'two more checks of the timing-out domain',
      () => dns.queries.slice(since).filter((query) => query.name === flakyDkim).length >= 2,
    );
    expect((await get(missing.id)).status).toBe('failed');
    const verify = await resend.domains.verify(missing.id);
    expect(verify).toMatchObject({ data: { object: 'domain', id: missing.id }, error: null });
    expect((await get(missing.id)).status).toBe('verified');
  });

  it('fails the SPF record when the return path has two SPF records', async () => {
    const name = uniqueDomain();
    const created = await create(name);
    const records = (await get(created.id)).records;
    publish(name, records);
    dns.add(`send.${name}`, [{ type: 'TXT', value: 'v=spf1 include:other.example.net -all' }]);
    const checked = await domainEvent('domain.updated', created.id, (d) =>
      (d.records as Records).some((r) => r.status === 'failed'),
    );
    expect((checked.envelope.data.records as Records).map((r) => [r.type, r.status])).toEqual([
      ['TXT', 'verified'],
      ['MX', 'verified'],
      ['TXT', 'failed'],
    ]);
    expect(checked.envelope.data.status).toBe('pending');
  });

  it('adds a receiving MX record when receiving is enabled and verifies both capabilities', async () => {
    const name = uniqueDomain();
    const created = await create(name, { capabilities: { sending: 'enabled', receiving: 'enabled' } });
    const records = created.records as Records;
    expect(records.at(-1)).toEqual({
      record: 'Receiving',
      name,
      type: 'MX',
      ttl: 'Auto',
      status: 'not_started',
      value: MX_HOST,
      priority: 10,
    });
    publish(name, records.slice(0, 3));
    await domainEvent('domain.updated', created.id, (d) => d.status === 'partially_verified');
    publish(name, records.slice(3));
    await domainEvent('domain.updated', created.id, (d) => d.status === 'verified');
    await stateEvent(created.id, (d) => d.sending_verified === true && d.receiving_verified === true);

    await resend.domains.update({ id: created.id, capabilities: { receiving: 'disabled' } });
    const after = await get(created.id);
    expect(after.capabilities).toEqual({ sending: 'enabled', receiving: 'disabled' });
    expect(after.records.map((r) => r.record)).toEqual(['DKIM', 'SPF', 'SPF']);
  });

  it('counts checks in the domain-verifier metrics', async () => {
    const metrics = await (await fetch(`${system.services['domain-verifier'].url}/metrics`)).text();
    expect(metrics).toMatch(/domain_checks_total\{[^}]*trigger="scheduled"[^}]*status="verified"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/domain_dns_lookup_duration_seconds_count\{[^}]*type="TXT"/);
  });
});

describe('tracking subdomain', () => {
  const since = () => events.messages.length;

  it('adds the Tracking CNAME and TrackingCAA records, verifies them apart from the domain status, and follows PATCH', async () => {
    const name = uniqueDomain();
    const label = name.split('.')[0];
    // A CAA set on the domain that allows another CA only (set before the first check can look).
    dns.set(name, [{ type: 'CAA', tag: 'issue', value: 'digicert.com' }]);
    const created = await create(name, { trackingSubdomain: 'Links', openTracking: true, clickTracking: true });
    expect(created.tracking_subdomain).toBe('links');
    const records = created.records as Records;
    expect(records.map((r) => r.record)).toEqual(['DKIM', 'SPF', 'SPF', 'Tracking', 'TrackingCAA']);
    expect(records.slice(3)).toEqual([
      {
        record: 'Tracking',
        name: `links.${label}`,
        type: 'CNAME',
        ttl: 'Auto',
        status: 'not_started',
        value: TRACKING_HOST,
      },
      {
        record: 'TrackingCAA',
        name: 'example.com',
        type: 'CAA',
        ttl: 'Auto',
        status: 'not_started',
        value: TRACKING_CAA,
      },
    ]);
    const createdEvent = await domainEvent('domain.created', created.id);
    expect((createdEvent.envelope.data.records as Records).slice(3).map((r) => [r.record, r.type])).toEqual([
      ['Tracking', 'CNAME'],
      ['TrackingCAA', 'CAA'],
    ]);
    await stateEvent(created.id, (d) => d.tracking_subdomain === 'links' && d.tracking_verified === false);

    // The sending records only: the domain is verified for sending, its tracking records are not, and
    // tracking is not verified.
    publish(name, records.slice(0, 3));
    const verified = await domainEvent('domain.updated', created.id, (d) => d.status === 'verified');
    expect((verified.envelope.data.records as Records).map((r) => [r.record, r.status])).toEqual([
      ['DKIM', 'verified'],
      ['SPF', 'verified'],
      ['SPF', 'verified'],
      ['Tracking', 'pending'],
      ['TrackingCAA', 'pending'],
    ]);
    await stateEvent(
      created.id,
      (d) => d.status === 'verified' && d.sending_verified === true && d.tracking_verified === false,
    );

    // The CNAME (any case, trailing dot) and our CA added to the domain's CAA set: tracking is verified, the
    // domain stays verified.
    const beforeTracking = since();
    dns.set(`links.${name}`, [{ type: 'CNAME', target: 'TRACK.postline.test.' }]);
    dns.add(name, [{ type: 'CAA', tag: 'issue', value: 'letsencrypt.org' }]);
    const tracked = await domainEvent(
      'domain.updated',
      created.id,
      (d) => (d.records as Records).every((r) => r.status === 'verified'),
      beforeTracking,
    );
    expect(tracked.envelope.data.status).toBe('verified');
    await stateEvent(created.id, (d) => d.tracking_verified === true && d.sending_verified === true, beforeTracking);
    const shown = await get(created.id);
    expect(shown.records.map((r) => r.status)).toEqual(['verified', 'verified', 'verified', 'verified', 'verified']);
    const caaLookups = dns.queries.filter((q) => q.type === 'CAA' && q.name.endsWith(name)).map((q) => q.name);
    expect(caaLookups).toEqual(expect.arrayContaining([`links.${name}`, name]));

    // The CNAME removed: tracking is no longer verified, sending is untouched.
    const beforeLoss = since();
    dns.remove(`links.${name}`);
    await stateEvent(
      created.id,
      (d) => d.tracking_verified === false && d.sending_verified === true && d.status === 'verified',
      beforeLoss,
    );
    expect((await get(created.id)).status).toBe('verified');

    // A new tracking subdomain replaces the records, not started, and tracking is not verified until found.
    const beforeMove = since();
    expect(await resend.domains.update({ id: created.id, trackingSubdomain: 'clicks' })).toMatchObject({ error: null });
    const moved = await domainEvent(
      'domain.updated',
      created.id,
      (d) => (d.records as Records).some((r) => r.name === `clicks.${label}`),
      beforeMove,
    );
    expect((moved.envelope.data.records as Records).slice(3).map((r) => [r.record, r.name, r.status])).toEqual([
      ['Tracking', `clicks.${label}`, 'not_started'],
      ['TrackingCAA', 'example.com', 'not_started'],
    ]);
    expect(moved.envelope.data.status).toBe('verified');
    await stateEvent(created.id, (d) => d.tracking_subdomain === 'clicks' && d.tracking_verified === false, beforeMove);
    dns.set(`clicks.${name}`, [{ type: 'CNAME', target: TRACKING_HOST }]);
    await stateEvent(created.id, (d) => d.tracking_subdomain === 'clicks' && d.tracking_verified === true, beforeMove);
    expect((await get(created.id)).records.find((r) => r.record === 'Tracking')).toMatchObject({
      name: `clicks.${label}`,
      status: 'verified',
    });

    // An empty tracking_subdomain clears it: the tracking records go, tracking is not verified.
    const beforeClear = since();
    expect(await call('PATCH', `/domains/${created.id}`, { tracking_subdomain: '' })).toMatchObject({ status: 200 });
    const cleared = await get(created.id);
    expect(cleared.records.map((r) => r.record)).toEqual(['DKIM', 'SPF', 'SPF']);
    expect(cleared).not.toHaveProperty('tracking_subdomain');
    expect(cleared.status).toBe('verified');
    await domainEvent('domain.updated', created.id, (d) => (d.records as Records).length === 3, beforeClear);
    await stateEvent(created.id, (d) => d.tracking_subdomain === null && d.tracking_verified === false, beforeClear);
  });

  it('verifies TrackingCAA when no CAA record exists on the host or its parents, and refuses a bad label', async () => {
    const name = uniqueDomain();
    const created = await create(name, { trackingSubdomain: 'go' });
    dns.set(`go.${name}`, [{ type: 'CNAME', target: TRACKING_HOST }]);
    await stateEvent(created.id, (d) => d.tracking_verified === true);
    const shown = await get(created.id);
    // Tracking is verified while the sending records are still missing: the domain itself is pending.
    expect(shown.status).toBe('pending');
    expect(shown.records.slice(3).map((r) => r.status)).toEqual(['verified', 'verified']);
    expect(await call('PATCH', `/domains/${created.id}`, { tracking_subdomain: 'not a label' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
  });
});
