import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { KEY_HEADER, PERMISSION_HEADER, TEAM_HEADER } from '@postline/platform';
import { asUser, createUser, signIn } from './accounts-harness.ts';
import { call, startGateway, type Gateway } from './harness.ts';

// A stand-in for the domain-verifier over a real socket: it answers with the headers the gateway sent it.
let owner: Server;
let gw: Gateway;
beforeAll(async () => {
  owner = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ object: 'list', has_more: false, data: [], headers: req.headers }));
  });
  await new Promise<void>((resolve) => owner.listen(0, '127.0.0.1', resolve));
  const port = (owner.address() as { port: number }).port;
  gw = await startGateway({ owners: { 'domain-verifier': `http://127.0.0.1:${port}` } });
});
afterAll(async () => {
  await gw.stop();
  await new Promise((resolve) => owner.close(resolve));
});

it('forwards a session request to the owner as the session’s team, without the cookie or the CSRF token', async () => {
  const a = await gw.createTeam();
  const b = await gw.createTeam();
  const user = await createUser(gw, [
    [a.teamId, 'member'],
    [b.teamId, 'admin'],
  ]);
  const s = await signIn(gw, user.email);
  const seen = async () => (await asUser(gw, s, 'GET', '/domains')).body.headers as IncomingHttpHeaders;
  const first = await seen();
  expect(first[TEAM_HEADER]).toBe(a.teamId);
  expect(first[PERMISSION_HEADER]).toBe('full_access');
  expect(first[KEY_HEADER]).toBeUndefined();
  expect(first.cookie).toBeUndefined();
  expect(first['x-csrf-token']).toBeUndefined();
  await asUser(gw, s, 'PUT', '/dashboard-api/session/team', { body: { team_id: b.teamId } });
  expect((await seen())[TEAM_HEADER]).toBe(b.teamId);
  // A key's request is forwarded as before.
  const byKey = (await call(gw, 'GET', '/domains', { key: a.apiKey })).body.headers as IncomingHttpHeaders;
  expect(byKey[TEAM_HEADER]).toBe(a.teamId);
  expect(byKey[KEY_HEADER]).toBe(a.keyId);
});
