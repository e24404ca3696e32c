// API fuzzing through the gateway: random methods, paths (every route family, with real, foreign, malformed
// and unicode ids), query strings, headers, content types, bodies and sizes. The properties: no answer is a
// 5xx; every error is the JSON body `{statusCode, name, message}` with a name and the status it claims; and
// afterwards every list still reads, item by item (nothing half-written).
//
// The pieces live in ./api/: the gateway's routes and fields (vocabulary.ts), the request generators and
// the runner with its properties. This file seeds the team and is the one the tests import.
import type { System } from '@postline/testing';
import type { FuzzContext } from './api/request-generators.ts';
import { send } from './api/runner.ts';

export type { FuzzContext } from './api/request-generators.ts';
export { checkListsReadable, fuzzApi } from './api/runner.ts';

/**
 * A team with a high rate limit (the fuzzer is not testing the limit) and one of each resource, whose ids
 * the fuzzer uses so that routes under an id reach their rules, not only their 404.
 */
export async function seedTeam(
  system: Pick<System, 'admin' | 'apiUrl'>,
  verifyDomain: (apiKey: string) => Promise<string>,
): Promise<FuzzContext> {
  const { team_id: teamId, api_key: apiKey } = await system.admin('team', 'create', '--name', 'fuzz');
  await system.admin('team', 'set-rate-limit', '--team', String(teamId), '--per-second', '100000');
  const ctx: FuzzContext = { apiUrl: system.apiUrl, apiKey: String(apiKey), knownIds: [] };
  const domain = await verifyDomain(ctx.apiKey);
  const from = `Fuzz <fuzz@${domain}>`;
  const headers = { authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' };
  const create = async (path: string, body: unknown) => {
    const answer = await send(ctx.apiUrl, { method: 'POST', path, headers, body: Buffer.from(JSON.stringify(body)) });
    if (answer.status >= 300) throw new Error(`seeding ${path}: ${answer.status} ${answer.body}`);
    const id = (JSON.parse(answer.body) as { id?: string }).id;
    if (id) ctx.knownIds.push(id);
    return id;
  };
  const segment = await create('/segments', { name: 'fuzzed' });
  await create('/contacts', { email: 'someone@fuzz.example.com', first_name: 'Some' });
  await create('/topics', { name: 'News', default_subscription: 'opt_in' });
  await create('/templates', { name: 'hello', html: '<p>Hi {{{NAME}}}</p>', subject: 'Hi' });
  await create('/contact-properties', { key: 'company', type: 'string' });
  await create('/webhooks', { endpoint: 'https://hooks.fuzz.example.com/in', events: ['email.sent'] });
  await create('/emails', { from, to: ['someone@fuzz-rcpt.example.net'], subject: 'seed', html: '<p>seed</p>' });
  await create('/broadcasts', { segment_id: segment, from, subject: 'seed', html: '<p>seed</p>' });
  return ctx;
}
