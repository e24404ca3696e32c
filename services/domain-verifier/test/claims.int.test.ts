// Domain claims end to end: the official resend SDK (domains.claims) through the real gateway, the real
// domain-verifier and the other services, and this file's DNS server standing in for the claiming team's
// DNS. A team proves with the claim's TXT record that it controls a domain another team registered and
// takes it over: the domain is made again under it with a fresh DKIM key and the id the claim announced,
// and the other team's domain is deleted.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import {
  dataOf,
  observeBroker,
  testResend,
  useSystem,
  type BrokerObserver,
  type SharedSystem,
} from '@postline/testing';

jest.setTimeout(60_000);

const POSTGRES_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/;

let system: SharedSystem;
let events: BrokerObserver;
let owner: Resend;
let claimant: Resend;
let claimantKey: string;
let ownerTeam: string;
let claimantTeam: string;

const world = useSystem();

beforeAll(async () => {
  system = world.system;
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'domain.*' }],
  });
  const first = await system.admin('team', 'create', '--name', 'Domain owner');
  owner = testResend(String(first.api_key), system.apiUrl);
  ownerTeam = String(first.team_id);
  const second = await system.admin('team', 'create', '--name', 'Domain claimant');
  claimantKey = String(second.api_key);
  claimant = testResend(claimantKey, system.apiUrl);
  claimantTeam = String(second.team_id);
}, 60_000);

afterAll(async () => {
  await events?.close();
}, 30_000);

let counter = 0;
const uniqueName = () => `claim${Date.now().toString(36)}${counter++}.example.com`;

async function claimOver(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${system.apiUrl}/domains/claim`, {
    method: 'POST',
    headers: { authorization: `Bearer ${claimantKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const dkimOf = (records: { record: string; value: string }[]) => records.find((r) => r.record === 'DKIM')?.value;

describe('domain claims', () => {
  it("take over another team's domain once the claim's TXT record is published", async () => {
    const name = uniqueName();
    const registered = dataOf(await owner.domains.create({ name }));

    const first = await claimOver({ name, region: 'eu-west-1' });
    expect(first.status).toBe(201);
    const claim = first.body;
    expect(claim).toEqual({
      object: 'domain_claim',
      id: expect.any(String),
      name,
      status: 'pending',
      domain_id: expect.any(String),
      region: 'eu-west-1',
      record: {
        type: 'TXT',
        name,
        value: expect.stringMatching(/^postline-domain-verification=[0-9a-f]{48}$/),
        ttl: 'Auto',
      },
      blocked_reason: null,
      failure_reason: null,
      created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      expires_at: expect.stringMatching(POSTGRES_TIMESTAMP),
    });
    const domainId = String(claim.domain_id);
    expect(domainId).not.toBe(registered.id);
    // The same claim again is the pending one, 200.
    expect(await claimOver({ name, region: 'eu-west-1' })).toEqual({ status: 200, body: claim });
    expect(dataOf(await claimant.domains.claims.get(domainId))).toEqual(claim);

    // Without the record the claim stays pending and the domain stays where it was.
    expect(dataOf(await claimant.domains.claims.verify(domainId))).toMatchObject({ status: 'pending' });
    expect(dataOf(await owner.domains.get(registered.id))).toMatchObject({ id: registered.id, name });

    world.dns.set(name, [{ type: 'TXT', value: String((claim.record as { value: string }).value) }]);
    expect(dataOf(await claimant.domains.claims.verify(domainId))).toMatchObject({
      id: claim.id,
      status: 'completed',
      domain_id: domainId,
    });
    expect(dataOf(await claimant.domains.claims.get(domainId))).toMatchObject({ status: 'completed' });

    const taken = dataOf(await claimant.domains.get(domainId));
    expect(taken).toMatchObject({ id: domainId, name, region: 'eu-west-1', status: 'not_started' });
    expect(dkimOf(taken.records)).toBeDefined();
    expect(dkimOf(taken.records)).not.toBe(dkimOf(registered.records));
    expect((await owner.domains.get(registered.id)).error).toMatchObject({ statusCode: 404 });
    expect(dataOf(await owner.domains.list()).data.map((d) => d.name)).not.toContain(name);

    const deleted = await events.waitFor('domain.deleted for the owner', (m) => {
      return m.routingKey === 'domain.deleted' && m.envelope.data.id === registered.id;
    });
    expect(deleted.envelope.team_id).toBe(ownerTeam);
    const created = await events.waitFor('domain.created for the claimant', (m) => {
      return m.routingKey === 'domain.created' && m.envelope.data.id === domainId;
    });
    expect(created.envelope.team_id).toBe(claimantTeam);

    // Now the claimant's own: nothing left to claim.
    expect(await claimOver({ name })).toMatchObject({ status: 422, body: { name: 'validation_error' } });
  });

  it('refuse a name no other team has, a bad name, and answer 404 for a claim that is not the team’s', async () => {
    expect(await claimOver({ name: uniqueName() })).toMatchObject({
      status: 422,
      body: { statusCode: 422, name: 'validation_error', message: expect.stringContaining('POST /domains') },
    });
    expect(await claimOver({ name: 'not a domain' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await claimOver({})).toMatchObject({ status: 422, body: { statusCode: 422 } });
    const name = uniqueName();
    dataOf(await owner.domains.create({ name }));
    expect(await claimOver({ name, region: 'mars-1' })).toMatchObject({
      status: 422,
      body: { name: 'invalid_region' },
    });

    const claim = dataOf(await claimant.domains.claims.create({ name }));
    const domainId = String(claim.domain_id);
    expect((await owner.domains.claims.get(domainId)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await owner.domains.claims.verify(domainId)).error).toMatchObject({ statusCode: 404 });
    expect((await claimant.domains.claims.get('not-an-id')).error).toMatchObject({ statusCode: 404 });

    // Other settings: a new claim, and the earlier one is superseded.
    const other = dataOf(await claimant.domains.claims.create({ name, openTracking: true }));
    expect(other.id).not.toBe(claim.id);
    expect(dataOf(await claimant.domains.claims.get(String(other.domain_id)))).toMatchObject({ status: 'pending' });
    expect(dataOf(await claimant.domains.claims.get(domainId))).toMatchObject({ status: 'superseded' });
  });
});
