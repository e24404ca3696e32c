// The Logs page as a developer uses it: an email sent with the official resend SDK (and a refused request)
// is found by its filters, kept in the URL; its entry shows both bodies, the email it created and the key
// that made it. In Chromium, against a running system.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { createVerifiedDomain, dataOf, testResend, useSystem, waitFor, type SharedSystem } from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createPerson, createTeam, signIn } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let emailId: string;
const subject = `Logs ${Date.now()}`;

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'Logbook');
  const domain = `logs-${Date.now()}.example.com`;
  await createVerifiedDomain({
    resend: testResend(team.apiKey, system.apiUrl),
    dns: world.dns,
    env: system.env,
    name: domain,
  });
  // A key of its own, so the filter by key finds only this flow's requests.
  const key = await system.admin('key', 'create', '--team', team.teamId, '--name', 'Newsletter');
  const resend = testResend(String(key.token), system.apiUrl);
  emailId = dataOf(
    await resend.emails.send({ from: `hi@${domain}`, to: `ada@${world.rcptDomain}`, subject, text: 'Hello' }),
  ).id;
  const refused = await resend.emails.send({
    from: 'hi@not-ours.example.com',
    to: 'a@example.com',
    subject,
    text: 'x',
  });
  expect(refused.error?.statusCode).toBe(403);
}, 90_000);

afterAll(async () => {
  await browser?.close();
});

describe('the Logs page', () => {
  it('finds an SDK request by its filters and shows its bodies, the email it created and its key', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Logs' }).click();
      await page.getByRole('heading', { name: 'Logs', level: 1 }).waitFor();
      await page
        .getByRole('row', { name: /POST \/emails/ })
        .first()
        .waitFor();

      await page.getByLabel('Method').selectOption('POST');
      await page.getByLabel('Endpoint').fill('/emails');
      await page.getByLabel('API key', { exact: true }).selectOption({ label: 'Newsletter' });
      await page.getByLabel('User agent').fill('resend-node');
      await page.getByLabel('From').fill(localMinute(Date.now() - 10 * 60_000));
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/api_key_id=.*created_after=/);
      const url = new URL(page.url());
      expect(url.searchParams.get('method')).toBe('POST');
      expect(url.searchParams.get('user_agent')).toBe('resend-node');
      // Only this key's two requests: the email sent (200) and the refused one (403).
      const rows = page.getByRole('row', { name: /POST \/emails/ });
      await waitFor('the two requests of the key', async () => (await rows.count()) === 2);
      expect(await page.getByRole('row', { name: /403/ }).count()).toBe(1);
      await checkPage(s, 'logs');

      // The filters survive a reload (they are the URL); a status class narrows to the success. The team's
      // keys are held back until the status is typed: their late arrival must not wipe what was typed.
      let releaseKeys = () => {};
      const keysHeld = new Promise<void>((resolve) => (releaseKeys = resolve));
      await page.route('**/api-keys?*', async (route) => {
        await keysHeld;
        await route.continue();
      });
      await page.reload();
      expect(await page.getByLabel('User agent').inputValue()).toBe('resend-node');
      await page.getByLabel('Status').fill('2xx');
      const keysArrived = page.waitForResponse((response) => new URL(response.url()).pathname === '/api-keys');
      releaseKeys();
      await keysArrived;
      // The page has drawn them: the key filter offers the team's first key (Default), which made no request here.
      await page
        .getByLabel('API key', { exact: true })
        .getByRole('option', { name: 'Default' })
        .waitFor({ state: 'attached' });
      await page.unroute('**/api-keys?*');
      expect(await page.getByLabel('Status').inputValue()).toBe('2xx');
      await page.getByRole('button', { name: 'Filter' }).click();
      await waitFor('the request that succeeded', async () => (await rows.count()) === 1);
      expect(await page.getByRole('row', { name: /403/ }).count()).toBe(0);

      await rows.first().getByRole('link', { name: 'POST /emails' }).click();
      await page.getByRole('heading', { name: 'POST /emails', level: 1 }).waitFor();
      const request = page.getByRole('region', { name: 'Request body' });
      const response = page.getByRole('region', { name: 'Response body' });
      expect(await request.textContent()).toContain(`"subject": "${subject}"`);
      expect(await response.textContent()).toContain(`"id": "${emailId}"`);
      await page.getByRole('heading', { name: 'Email created' }).waitFor();
      await page.getByRole('button', { name: `Copy the email id ${emailId}` }).click();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(emailId);
      await checkPage(s, 'log-entry');

      // From the entry to every request of its key.
      await page.getByRole('link', { name: 'Every request made with this key' }).click();
      await page.waitForURL(/\/dashboard\/logs\?api_key_id=/);
      await page.getByRole('row', { name: /403/ }).waitFor();
      await page.getByRole('link', { name: 'Newsletter', exact: true }).first().click();
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('shows its empty state and the API’s message for a bad filter, at phone width', async () => {
    const member = await createPerson(system, team.teamId, 'member', 'Lou');
    const s = await openBrowserSession(browser, system.apiUrl, { viewport: PHONE });
    const { page } = s;
    try {
      await signIn(page, member, '/dashboard/logs?endpoint=/nothing-here');
      await page.getByRole('heading', { name: 'No request matches these filters' }).waitFor();
      await page.getByLabel('Endpoint').fill('emails');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByRole('alert').getByText('must be a path starting with').waitFor();
      await checkPage(s, 'logs-phone');
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

/** A time as a datetime-local input takes it, in the browser's (and this process's) time zone. */
function localMinute(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
