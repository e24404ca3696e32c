import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { newId, PERMISSION_HEADER, TEAM_HEADER } from '@postline/platform';
import { freePort, waitFor } from '@postline/testing';
import { accessibilityViolations, launchBrowser, openBrowserSession, screenshot } from '@postline/testing/browser';
import { asUser, createUser, PASSWORD, signIn } from './accounts-harness.ts';
import { call, startGateway, type Gateway } from './harness.ts';

jest.setTimeout(90_000);

// A stand-in for the sender over a real socket: it keeps what it is asked to send and answers as told (and
// says the development inbox is off, which every dashboard page asks).
const received: {
  headers: IncomingHttpHeaders;
  body: { from: string; to: string[]; subject: string; text: string };
}[] = [];
let answer = 200;
let sender: Server;
let gw: Gateway;
let browser: Browser | undefined;
const operatorTeam = newId();

/** The link in the last email sent to `to`, once it is in. */
/** The link in the newest email to `to`, once more than `earlier` emails went to it. */
async function linkMailedTo(to: string, earlier = 0): Promise<string> {
  const mailsTo = () => received.filter((m) => m.body.to[0] === to);
  await waitFor(`email ${earlier + 1} to ${to}`, () => mailsTo().length > earlier);
  const mail = mailsTo().at(-1)!;
  return /https?:\/\/\S+/.exec(mail.body.text)![0];
}

beforeAll(async () => {
  sender = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/dev-inbox') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'dev_inbox', enabled: false, count: 0 }));
      return;
    }
    // The reputation banner's read on every page: a team sending, nothing paused.
    if (req.method === 'GET' && req.url === '/reputation') {
      const window = { sends: 0, bounces: 0, complaints: 0, bounce_rate: 0, complaint_rate: 0, paused: null };
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          object: 'reputation',
          thresholds: {
            bounce_rate: 0.04,
            complaint_rate: 0.0008,
            window: 10_000,
            min_sends: 2_500,
            set_for_team: [],
          },
          team: window,
          domains: [],
        }),
      );
      return;
    }
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
  // The links in the emails name the gateway's own address (PUBLIC_BASE_URL), which the browser then opens.
  const apiPort = await freePort();
  gw = await startGateway({
    owners: { sender: `http://127.0.0.1:${port}` },
    env: {
      DASHBOARD_MAIL_FROM: 'Postline <no-reply@mail.example.com>',
      DASHBOARD_MAIL_TEAM_ID: operatorTeam,
      API_PORT: String(apiPort),
      PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
      // Every request of the file comes from 127.0.0.1: the per-address limit is another test's subject.
      SIGN_IN_ATTEMPTS_PER_ADDRESS: '1000',
    },
  });
});
afterAll(async () => {
  await browser?.close();
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
  expect(url.startsWith(`${gw.url}/dashboard/reset-password?token=`)).toBe(true);
  const done = await call(gw, 'POST', '/dashboard-api/password-resets/complete', {
    body: { token: new URL(url).searchParams.get('token'), password: 'a brand new password' },
  });
  expect(done.body).toEqual({ object: 'user', id: user.id });
  await signIn(gw, user.email, 'a brand new password');

  for (let i = 0; i < 3; i++) await ask(user.email);
  // Each request is handled after its 202, concurrently: once the limiter has counted all four for the address
  // (the count comes before any email), what is sent is settled: three emails, the fourth refused.
  const counted = `${gw.redisPrefix}:signin:reset:${user.email.toLowerCase()}`;
  await waitFor('the four requests counted', async () => Number(await gw.redis.get(counted)) === 4);
  await waitFor('three reset emails', () => received.filter((m) => m.body.to[0] === user.email).length === 3);
  await ask(sentinel.email);
  await waitFor('the sentinel’s email', () => received.some((m) => m.body.to[0] === sentinel.email));
  expect(received.filter((m) => m.body.to[0] === user.email)).toHaveLength(3);
  expect(received.filter((m) => m.body.to[0] === 'no-account@example.com')).toEqual([]);
});

it('in the browser: an invite and a forgotten password arrive by email, and their links work', async () => {
  browser = await launchBrowser();
  const team = await gw.createTeam();
  const owner = await createUser(gw, [[team.teamId, 'admin']]);
  const admin = await openBrowserSession(browser, gw.url);
  const guest = await openBrowserSession(browser, gw.url);
  try {
    await admin.page.goto('/dashboard/sign-in');
    await admin.page.getByLabel('Email').fill(owner.email);
    await admin.page.getByLabel('Password').fill(PASSWORD);
    await admin.page.getByRole('button', { name: 'Sign in' }).click();
    await admin.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' }).click();

    // The invite is emailed: the dialog says so and shows no link to copy.
    const invitee = `joiner-${Date.now()}@example.com`;
    await admin.page.getByRole('button', { name: 'Invite someone' }).click();
    const form = admin.page.getByRole('dialog', { name: 'Invite someone' });
    await form.getByLabel('Email').fill(invitee);
    await form.getByRole('button', { name: 'Invite' }).click();
    const made = admin.page.getByRole('dialog', { name: 'Invite made' });
    await made.getByText(`The invite link was emailed to ${invitee}.`).waitFor();
    expect(await made.getByRole('button', { name: 'Copy the invite link' }).count()).toBe(0);
    expect(await accessibilityViolations(admin.page)).toEqual([]);
    await screenshot(admin.page, 'invite-emailed');

    // The invitee follows the emailed link and joins.
    await guest.page.goto(await linkMailedTo(invitee));
    await guest.page.getByLabel('Your name').fill('Joiner');
    await guest.page.getByLabel('Password').fill('joiner-first-password');
    await guest.page.getByRole('button', { name: 'Join the team' }).click();
    await guest.page.getByRole('button', { name: 'Sign out' }).click();

    // Forgotten: asked from the sign-in page, the reset link arrives by email and sets a new password.
    await guest.page.getByRole('link', { name: 'Forgot your password?' }).click();
    await guest.page.getByLabel('Email').fill(invitee);
    // The reset email goes out after the answer: wait for it, not for the invite already there.
    const mailedBefore = received.filter((m) => m.body.to[0] === invitee).length;
    await guest.page.getByRole('button', { name: 'Send reset link' }).click();
    await guest.page.getByText('a reset link is on its way').waitFor();
    await guest.page.goto(await linkMailedTo(invitee, mailedBefore));
    await guest.page.getByLabel('New password', { exact: true }).fill('joiner-second-password');
    await guest.page.getByRole('button', { name: 'Set password' }).click();
    await guest.page.getByText('Your password is changed').waitFor();
    await guest.page.getByRole('link', { name: 'Sign in' }).click();
    await guest.page.getByLabel('Email').fill(invitee);
    await guest.page.getByLabel('Password').fill('joiner-second-password');
    await guest.page.getByRole('button', { name: 'Sign in' }).click();
    await guest.page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect([...admin.problems(), ...guest.problems()]).toEqual([]);
  } finally {
    await Promise.all([admin.close(), guest.close()]);
  }
});
