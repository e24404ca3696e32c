import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { newId, PERMISSION_HEADER, TEAM_HEADER } from '@postline/platform';
import { waitFor } from '@postline/testing';
import { asUser, createUser, signIn } from './accounts-harness.ts';
import { call, startGateway, type Gateway } from './harness.ts';

// A stand-in for the sender over a real socket: it keeps what it is asked to send and answers as told.
const received: {
  headers: IncomingHttpHeaders;
  body: { from: string; to: string[]; subject: string; text: string };
}[] = [];
let answer = 200;
let sender: Server;
let gw: Gateway;
const operatorTeam = newId();

beforeAll(async () => {
  sender = createServer((req, res) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(data) as (typeof received)[number]['body'] });
      res.statusCode = answer;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify(
          answer === 200 ? { id: newId() } : { statusCode: answer, name: 'validation_error', message: 'no' },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => sender.listen(0, '127.0.0.1', resolve));
  const port = (sender.address() as { port: number }).port;
  gw = await startGateway({
    owners: { sender: `http://127.0.0.1:${port}` },
    env: { DASHBOARD_MAIL_FROM: 'Postline <no-reply@mail.example.com>', DASHBOARD_MAIL_TEAM_ID: operatorTeam },
  });
});
afterAll(async () => {
  await gw.stop();
  await new Promise((resolve) => sender.close(resolve));
});

it('emails an invite through Postline as the operator’s team, and shows the link when the sender refuses', async () => {
  const team = await gw.createTeam();
  const owner = await createUser(gw, [[team.teamId, 'admin']]);
  const a = await signIn(gw, owner.email);
  const invite = await asUser(gw, a, 'POST', '/dashboard-api/invites', { body: { email: 'invitee@example.com' } });
  expect(invite.status).toBe(201);
  expect(invite.body.email_sent).toBe(true);
  expect(invite.body.url).toBeUndefined();
  const mail = received.at(-1)!;
  expect(mail.headers[TEAM_HEADER]).toBe(operatorTeam);
  expect(mail.headers[PERMISSION_HEADER]).toBe('full_access');
  expect(mail.body).toMatchObject({ from: 'Postline <no-reply@mail.example.com>', to: ['invitee@example.com'] });
  const url = /https?:\/\/\S+/.exec(mail.body.text)![0];
  const token = new URL(url).searchParams.get('token')!;
  const accepted = await call(gw, 'POST', '/dashboard-api/invites/accept', {
    body: { token, name: 'Invitee', password: 'a long password' },
  });
  expect(accepted.status).toBe(201);

  answer = 422;
  const shown = await asUser(gw, a, 'POST', '/dashboard-api/invites', { body: { email: 'other@example.com' } });
  expect(shown.body.email_sent).toBe(false);
  expect(String(shown.body.url)).toContain('/dashboard/invite?token=');
  answer = 200;

  const member = await createUser(gw, [[team.teamId, 'member']]);
  const reset = await asUser(gw, a, 'POST', '/dashboard-api/password-resets', { body: { user_id: member.id } });
  expect(reset.body.email_sent).toBe(true);
  expect(received.at(-1)!.body.to).toEqual([member.email]);
  expect(received.at(-1)!.body.text).toContain('/dashboard/reset-password?token=');
});

it('emails a reset link to an address that has an account, at most three a window, and nothing to one without', async () => {
  const team = await gw.createTeam();
  const user = await createUser(gw, [[team.teamId, 'member']]);
  const sentinel = await createUser(gw, [[team.teamId, 'member']]);
  const ask = async (email: string) => {
    const r = await call(gw, 'POST', '/dashboard-api/password-resets/request', { body: { email } });
    expect(r.status).toBe(202);
  };
  await ask('no-account@example.com');
  await ask(user.email.toUpperCase());
  await waitFor('the reset email', () => received.some((m) => m.body.to[0] === user.email));
  const mail = received.find((m) => m.body.to[0] === user.email)!;
  expect(mail.body.subject).toBe('Reset your Postline password');
  const url = /https?:\/\/\S+/.exec(mail.body.text)![0];
  expect(url).toMatch(/^http:\/\/localhost:3000\/dashboard\/reset-password\?token=/);
  const done = await call(gw, 'POST', '/dashboard-api/password-resets/complete', {
    body: { token: new URL(url).searchParams.get('token'), password: 'a brand new password' },
  });
  expect(done.body).toEqual({ object: 'user', id: user.id });
  await signIn(gw, user.email, 'a brand new password');

  for (let i = 0; i < 3; i++) await ask(user.email);
  // The sentinel's email is asked last: once it is in, every request before it has been handled.
  await ask(sentinel.email);
  await waitFor('the sentinel’s email', () => received.some((m) => m.body.to[0] === sentinel.email));
  expect(received.filter((m) => m.body.to[0] === user.email)).toHaveLength(3);
  expect(received.filter((m) => m.body.to[0] === 'no-account@example.com')).toEqual([]);
});
