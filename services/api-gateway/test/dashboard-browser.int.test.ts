// The dashboard's accounts in Chromium against a gateway with a fresh database: the first account made from
// the link printed at start, and the cases that keep a team safe: a change without the CSRF header, another
// team's ids, a locked-out sign-in, and a session copied elsewhere that ends when the password changes.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { checkApiResponse, freePort } from '@postline/testing';
import {
  launchBrowser,
  openBrowserSession,
  accessibilityViolations,
  screenshot,
  type BrowserSession,
} from '@postline/testing/browser';
import { createUser, PASSWORD } from './accounts-harness.ts';
import { startGateway, type Gateway } from './harness.ts';

jest.setTimeout(90_000);

let gw: Gateway;
let browser: Browser;

beforeAll(async () => {
  const port = await freePort();
  // The browser's Origin is the gateway's own address, which PUBLIC_BASE_URL must name.
  gw = await startGateway({
    env: { API_PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, SIGN_IN_FAILURES_PER_ACCOUNT: '3' },
  });
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

async function check(s: BrowserSession, name: string): Promise<void> {
  await s.page.waitForLoadState('networkidle');
  expect(await accessibilityViolations(s.page)).toEqual([]);
  await screenshot(s.page, name);
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** A request from the signed-in page's own script, as an attacker's script on it could make one. */
function fetchFromPage(page: Page, path: string, init: { method: string; csrf: boolean; body?: unknown }) {
  return page.evaluate(
    async ({ path, init }) => {
      const session = (await (await fetch('/dashboard-api/session')).json()) as { csrf_token: string };
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (init.csrf) headers['x-csrf-token'] = session.csrf_token;
      const r = await fetch(path, {
        method: init.method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      return { status: r.status, body: (await r.json()) as { name: string } };
    },
    { path, init },
  );
}

describe('the first account', () => {
  it('is made from the link printed at start, which then works no more', async () => {
    const link = gw.setupLink();
    expect(link).toMatch(new RegExp(`^${gw.url}/dashboard/setup\\?token=`));
    const token = new URL(link!).searchParams.get('token');
    const s = await openBrowserSession(browser, gw.url);
    const { page } = s;
    try {
      // A browser opening the API's address finds the dashboard; a program without a key still gets JSON.
      await page.goto('/');
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
      const program = await fetch(`${gw.url}/`, { headers: { accept: 'application/json' } });
      expect(program.status).toBe(401);
      expect(await program.json()).toEqual(expect.objectContaining({ name: 'missing_api_key' }));

      await page.goto(link!);
      await page.getByRole('heading', { name: 'Create the first account' }).waitFor();
      await check(s, 'setup');
      await page.getByLabel('Your name').fill('Grace Hopper');
      await page.getByLabel('Email').fill('grace@example.com');
      await page.getByLabel('Password').fill('short');
      await page.getByLabel('Team name').fill('Navy');
      await page.getByRole('button', { name: 'Create account' }).click();
      // The browser refuses a password under 10 characters before the API is asked.
      expect(
        await page
          .getByLabel('Password')
          .evaluate((el) => (el as unknown as { validity: { valid: boolean } }).validity.valid),
      ).toBe(false);
      await page.getByLabel('Password').fill('a long enough password');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await page.getByText('Navy').first().waitFor();
      expect(await page.getByRole('link', { name: 'API keys' }).count()).toBe(1);

      // Used once: the link now answers that it is not valid.
      await page.goto(`/dashboard/setup?token=${token}`);
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);

      await page.goto('/dashboard/');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await check(s, 'sign-in');
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

describe('a signed-in session', () => {
  it('refuses a change without the CSRF header, and answers 404 for another team’s ids', async () => {
    const mine = await gw.createTeam();
    const theirs = await gw.createTeam();
    const ada = await createUser(gw, [[mine.teamId, 'admin']]);
    const s = await openBrowserSession(browser, gw.url);
    const { page } = s;
    try {
      await signIn(page, ada.email, PASSWORD);
      await page.getByRole('button', { name: 'Sign out' }).waitFor();

      const forged = await fetchFromPage(page, '/api-keys', { method: 'POST', csrf: false, body: { name: 'x' } });
      expect(forged).toEqual({ status: 403, body: expect.objectContaining({ name: 'invalid_csrf_token' }) });
      const made = await fetchFromPage(page, '/api-keys', { method: 'POST', csrf: true, body: { name: 'ok' } });
      expect(made.status).toBe(201);

      const other = await fetchFromPage(page, `/api-keys/${theirs.keyId}`, { method: 'DELETE', csrf: true });
      expect(other).toEqual({ status: 404, body: expect.objectContaining({ name: 'not_found' }) });
      expect(await checkApiResponse('GET', '/api-keys', await fetch(`${gw.url}/api-keys`))).toBeUndefined();
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('is locked out after repeated wrong passwords, even with the right one', async () => {
    const team = await gw.createTeam();
    const bob = await createUser(gw, [[team.teamId, 'member']]);
    const s = await openBrowserSession(browser, gw.url);
    const { page } = s;
    try {
      for (let i = 0; i < 3; i++) {
        await signIn(page, bob.email, 'not the password');
        await page
          .getByRole('alert')
          .getByText(/password/i)
          .waitFor();
      }
      await signIn(page, bob.email, PASSWORD);
      await page
        .getByRole('alert')
        .getByText(/too many|try again/i)
        .waitFor();
      await check(s, 'sign-in-locked');
      expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('copied to another browser ends when the password is changed (every other session signs out)', async () => {
    const team = await gw.createTeam();
    const eve = await createUser(gw, [[team.teamId, 'admin']]);
    const victim = await openBrowserSession(browser, gw.url);
    const thief = await openBrowserSession(browser, gw.url);
    const owner = await openBrowserSession(browser, gw.url);
    try {
      await signIn(victim.page, eve.email, PASSWORD);
      await victim.page.getByRole('button', { name: 'Sign out' }).waitFor();
      // The thief holds a copy of the victim's session cookie.
      await thief.context.addCookies(await victim.context.cookies());
      await thief.page.goto('/dashboard/api-keys');
      await thief.page.getByRole('heading', { name: 'API keys' }).waitFor();

      await signIn(owner.page, eve.email, PASSWORD);
      await owner.page.getByRole('link', { name: 'Ada' }).click();
      await owner.page.getByRole('heading', { name: 'Signed-in sessions' }).waitFor();
      await owner.page.getByRole('row').nth(2).waitFor();
      await check(owner, 'account');
      await owner.page.getByLabel('Current password').fill(PASSWORD);
      await owner.page.getByLabel('New password').fill('a brand new password');
      await owner.page.getByRole('button', { name: 'Change password' }).click();
      await owner.page.getByText('Every other session has been signed out').waitFor();

      await thief.page.reload();
      await thief.page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect([...victim.problems(), ...thief.problems(), ...owner.problems()]).toEqual([]);
    } finally {
      await Promise.all([victim.close(), thief.close(), owner.close()]);
    }
  });
});
