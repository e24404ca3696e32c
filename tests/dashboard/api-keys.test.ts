// The API keys page as an admin uses it: a key is created (its token shown once, copied), sends an email with
// the official resend SDK, is renamed and revoked; a member sees no keys. In Chromium, against a running system.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { createVerifiedDomain, dataOf, testResend, useSystem, waitFor, type SharedSystem } from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createPerson, createTeam, signIn, type Person } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let domain: string;

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'Keys');
  domain = `keys-${Date.now()}.example.com`;
  await createVerifiedDomain({
    resend: testResend(team.apiKey, system.apiUrl),
    dns: world.dns,
    env: system.env,
    name: domain,
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
});

describe('the API keys page', () => {
  it('creates a key shown once, which sends with the resend SDK; renames and revokes it', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
      // The team's first key, made by the admin CLI, is listed.
      await page.getByRole('row', { name: /^Default/ }).waitFor();
      await checkPage(s, 'api-keys');

      await page.getByRole('button', { name: 'Create API key' }).click();
      const dialog = page.getByRole('dialog', { name: 'Create API key' });
      await dialog.getByLabel('Name').fill('Production sender');
      await dialog.getByLabel('Permission').selectOption({ label: 'Sending access' });
      await dialog.getByLabel('Domain').selectOption({ label: domain });
      await dialog.getByLabel('Expires').selectOption({ label: 'In 30 days' });
      await dialog.getByRole('button', { name: 'Create' }).click();

      const shown = page.getByRole('dialog', { name: 'Your new API key' });
      await shown.getByText('it is shown only once').waitFor();
      const token = (await shown.locator('code').textContent()) ?? '';
      expect(token).toMatch(/^re_|^pl_/);
      await checkPage(s, 'api-keys-created');
      await shown.getByRole('button', { name: 'Copy the API key' }).click();
      await shown.getByText('Copied').waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(token);
      await shown.getByRole('button', { name: 'Done' }).click();

      const row = page.getByRole('row', { name: /Production sender/ });
      await row.waitFor();
      expect(await row.textContent()).toContain('Sending');
      expect(await row.textContent()).toContain(domain);
      // Shown once: after a reload the token is nowhere on the page.
      await page.reload();
      await row.waitFor();
      expect(await page.content()).not.toContain(token);

      // The key works with the official SDK, held to its domain.
      const resend = testResend(token, system.apiUrl);
      const sent = dataOf(
        await resend.emails.send({ from: `hi@${domain}`, to: `ada@${world.rcptDomain}`, subject: 'Hi', text: 'Hello' }),
      );
      expect(sent.id).toBeTruthy();
      await waitFor('the key’s last use shown', async () => {
        await page.reload();
        return !(await row.getByRole('cell').nth(3).textContent())?.includes('Never');
      });

      await row.getByRole('button', { name: 'Rename Production sender' }).click();
      const rename = page.getByRole('dialog', { name: 'Rename Production sender' });
      await rename.getByRole('textbox', { name: 'Name' }).fill('Billing sender');
      await rename.getByRole('button', { name: 'Save' }).click();
      const renamed = page.getByRole('row', { name: /Billing sender/ });
      await renamed.waitFor();

      await renamed.getByRole('button', { name: 'Revoke Billing sender' }).click();
      const confirm = page.getByRole('dialog', { name: 'Revoke Billing sender?' });
      await checkPage(s, 'api-keys-revoke');
      await confirm.getByRole('button', { name: 'Revoke key' }).click();
      await renamed.waitFor({ state: 'detached' });
      const refused = await resend.emails.send({
        from: `hi@${domain}`,
        to: `ada@${world.rcptDomain}`,
        subject: 'Hi',
        text: 'x',
      });
      expect(refused.error?.statusCode).toBe(403);

      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('is not offered to a member, whose calls to /api-keys are refused', async () => {
    const member: Person = await createPerson(system, team.teamId, 'member', 'Max');
    const s = await openBrowserSession(browser, system.apiUrl, { viewport: PHONE });
    const { page } = s;
    try {
      await signIn(page, member);
      await page.getByRole('button', { name: 'Menu' }).click();
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Domains' }).waitFor();
      expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
      await checkPage(s, 'member-menu-phone');

      await page.goto('/dashboard/api-keys');
      await page.getByRole('alert').getByText('Only the team’s admins manage API keys').waitFor();
      const answer = await page.evaluate(async () => {
        const session = (await (await fetch('/dashboard-api/session')).json()) as { csrf_token: string };
        const r = await fetch('/api-keys', { headers: { 'x-csrf-token': session.csrf_token } });
        return { status: r.status, body: (await r.json()) as { name: string } };
      });
      expect(answer).toEqual({ status: 403, body: expect.objectContaining({ name: 'invalid_permission' }) });
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
