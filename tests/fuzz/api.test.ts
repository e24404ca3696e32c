// The short run of the API fuzzer (`npm run fuzz` runs 100,000 requests; see README).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createVerifiedDomain,
  observeBroker,
  type BrokerObserver,
  type DnsServer,
  testResend,
  useSystem,
  type SharedSystem,
} from '@postline/testing';
import { checkListsReadable, fuzzApi, seedTeam, type FuzzContext } from './api-fuzz.ts';

const RCPT = 'fuzz-rcpt.example.net';
let system: SharedSystem;
let dns: DnsServer;
let events: BrokerObserver;
let ctx: FuzzContext;

const world = useSystem({ rcptDomain: RCPT });

beforeAll(async () => {
  // The system delivers what the fuzzer sends to a local sink; every other lookup finds nothing.
  ({ dns, system } = world);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  ctx = await seedTeam(system, async (apiKey) => {
    const resend = testResend(apiKey, system.apiUrl);
    return (await createVerifiedDomain({ resend, dns, events, name: 'fuzz.example.com' })).name;
  });
}, 120_000);

afterAll(async () => {
  await events?.close();
}, 30_000);

const runs = Number(process.env.FUZZ_RUNS ?? 1500);
/** Requests in flight at once (each lane a fast-check run of its own). */
const lanes = 4;

describe('API fuzzing through the gateway', () => {
  it(
    'answers random requests on every route without a 5xx, each error a named JSON error, and leaves every list readable',
    async () => {
      const { statuses } = await fuzzApi(ctx, runs, { lanes });
      // The run reached past authentication and validation into the routes themselves.
      expect([...statuses.keys()].some((status) => status >= 200 && status < 300)).toBe(true);
      expect(statuses.get(422) ?? 0).toBeGreaterThan(0);
      expect(await checkListsReadable(ctx)).toEqual([]);
    },
    Math.max(600_000, runs * 20),
  );
});
