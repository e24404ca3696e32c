// The Suppressions page as a person uses it: an address that bounced for good (sent with the official resend
// SDK to the file's MX, which refuses it) is listed with its reason and found by the reason filter and by a
// lookup; addresses are added by hand, one refused with the API's message, then all of them; one is removed
// after a confirmation and mail goes to it again. A member manages them too. In Chromium, against a running
// system.
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
let bounced: string;

/** The team's suppression of an address, through the API (404 when there is none). */
async function suppressionOf(email: string): Promise<{ status: number; body: { origin?: string } }> {
  const r = await fetch(`${system.apiUrl}/suppressions/${encodeURIComponent(email)}`, {
    headers: { authorization: `Bearer ${team.apiKey}` },
  });
  return { status: r.status, body: (await r.json()) as { origin?: string } };
}

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'Lists');
  const domain = `suppress-${Date.now()}.example.com`;
  const resend = testResend(team.apiKey, system.apiUrl);
  await createVerifiedDomain({ resend, dns: world.dns, env: system.env, name: domain });
  // The file's MX refuses `hard…` addresses with 550 5.1.1: a permanent bounce suppresses the address.
  bounced = `hard-${Date.now()}@${world.rcptDomain}`;
  dataOf(await resend.emails.send({ from: `hi@${domain}`, to: bounced, subject: 'Hello', text: 'Hello' }));
  await waitFor(
    'the bounce to suppress the address',
    async () => (await suppressionOf(bounced)).status === 200,
    60_000,
  );
}, 90_000);

afterAll(async () => {
  await browser?.close();
});

describe('the Suppressions page', () => {
  it('lists a bounce, filters by reason, looks an address up, adds addresses and removes one', async () => {
    const member = await createPerson(system, team.teamId, 'member');
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, member);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Suppressions' }).click();
      await page.getByRole('heading', { name: 'Suppressions', level: 1 }).waitFor();
      const bounceRow = page.getByRole('row', { name: new RegExp(bounced) });
      await bounceRow.getByText('bounce').waitFor();

      // Added by hand: a bad address is refused with the API's message, then three go in at once.
      const stamp = Date.now();
      const added = [`ann-${stamp}@example.org`, `bob-${stamp}@example.org`, `cy-${stamp}@example.org`];
      await page.getByRole('button', { name: 'Add addresses' }).click();
      const dialog = page.getByRole('dialog', { name: 'Suppress addresses' });
      await dialog.getByLabel('Addresses', { exact: true }).fill(`${added[0]}\nnot-an-address`);
      await dialog.getByRole('button', { name: 'Suppress' }).click();
      await dialog.getByRole('alert').waitFor();
      expect(await dialog.getByRole('alert').textContent()).toContain('validation_error');
      await dialog.getByLabel('Addresses', { exact: true }).fill(added.join('\n'));
      await dialog.getByRole('button', { name: 'Suppress' }).click();
      await dialog.getByText('3 addresses are suppressed').waitFor();
      await dialog.getByRole('button', { name: 'Done' }).click();
      for (const email of added)
        await page
          .getByRole('row', { name: new RegExp(email) })
          .getByText('added by hand')
          .waitFor();
      expect((await suppressionOf(added[1]!)).body.origin).toBe('manual');

      // The reason filter, kept in the URL: bounces only.
      await page.getByLabel('Reason').selectOption({ label: 'Bounce' });
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/origin=bounce/);
      await waitFor(
        'only bounces listed',
        async () => (await page.getByRole('row', { name: /added by hand/ }).count()) === 0,
      );
      await bounceRow.waitFor();
      await page.reload();
      expect(await page.getByLabel('Reason').inputValue()).toBe('bounce');
      await bounceRow.waitFor();
      await checkPage(s, 'suppressions');

      // A lookup: the bounced address is suppressed; another is not.
      const find = page.getByRole('form', { name: 'Find an address' });
      await find.getByLabel('Is this address suppressed?').fill(bounced);
      await find.getByRole('button', { name: 'Look up' }).click();
      await page.getByRole('status').getByText(`${bounced} is suppressed`).waitFor();
      await find.getByLabel('Is this address suppressed?').fill(`nobody-${stamp}@example.org`);
      await find.getByRole('button', { name: 'Look up' }).click();
      await page.getByRole('status').getByText('is not suppressed').waitFor();

      // Removed after a confirmation: gone from the list and from the API.
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.getByRole('button', { name: `Remove ${added[0]}` }).click();
      const confirm = page.getByRole('dialog', { name: `Remove ${added[0]}?` });
      await confirm.getByText('is sent again').waitFor();
      await confirm.getByRole('button', { name: 'Remove suppression' }).click();
      await page.getByRole('row', { name: new RegExp(added[0]!) }).waitFor({ state: 'detached' });
      expect((await suppressionOf(added[0]!)).status).toBe(404);
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('shows its empty state at phone width for a team with no suppression', async () => {
    const empty = await createTeam(system, 'Quiet');
    const s = await openBrowserSession(browser, system.apiUrl, { viewport: PHONE });
    try {
      await signIn(s.page, empty.admin, '/dashboard/suppressions');
      await s.page.getByRole('heading', { name: 'No suppressed addresses' }).waitFor();
      await checkPage(s, 'suppressions-phone');
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
