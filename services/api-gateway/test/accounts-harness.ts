import { newId } from '@postline/platform';
import { hashPassword } from '../src/accounts/password.ts';
import { addMember, insertUser } from '../src/db/accounts.ts';
import type { Role } from '../src/db/schema.ts';
import { CSRF_HEADER } from '../src/domain/session.ts';
import { call, type Answer, type Gateway } from './harness.ts';

export { DEFAULT_ORIGIN as ORIGIN } from './harness.ts';
export const PASSWORD = 'correct horse battery';

export type SignedIn = { cookie: string; csrf: string; id: string; body: Record<string, unknown> };

/** A user with PASSWORD, member of each team with its role. */
export async function createUser(
  gw: Gateway,
  teams: [teamId: string, role: Role][],
): Promise<{ id: string; email: string }> {
  const id = newId();
  const email = `user-${id}@example.com`;
  await insertUser(gw.db, { id, email, name: 'Ada', password_hash: await hashPassword(PASSWORD) });
  for (const [teamId, role] of teams) await addMember(gw.db, teamId, id, role);
  return { id, email };
}

/** The `name=value` of the Set-Cookie of an answer (what a browser sends back). */
export function cookieOf(answer: Answer): string {
  const set = answer.headers.get('set-cookie') ?? '';
  return set.split(';')[0] ?? '';
}

export async function signIn(gw: Gateway, email: string, password = PASSWORD, teamId?: string): Promise<SignedIn> {
  const r = await call(gw, 'POST', '/dashboard-api/session', {
    body: { email, password, ...(teamId ? { team_id: teamId } : {}) },
    headers: { origin: gw.origin },
  });
  if (r.status !== 201) throw new Error(`sign-in answered ${r.status} ${JSON.stringify(r.body)}`);
  return { cookie: cookieOf(r), csrf: String(r.body.csrf_token), id: String(r.body.id), body: r.body };
}

/** A request as the dashboard makes it: the session cookie, its CSRF header and the site's Origin. */
export function asUser(
  gw: Gateway,
  s: SignedIn,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return call(gw, method, path, {
    body: opts.body,
    headers: { cookie: s.cookie, [CSRF_HEADER]: s.csrf, origin: gw.origin, ...opts.headers },
  });
}
