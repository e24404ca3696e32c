// The Team and Audit log pages as people use them: an admin invites a member (the link shown once, copied),
// who joins from it in another browser and cannot see API keys; the admin cannot demote the last admin,
// changes the member's role, makes a password-reset link the member uses; the audit log shows it all,
// filtered by family. In Chromium, against a running system.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { useSystem, waitFor, type SharedSystem } from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createTeam, signIn } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

/** The link a dialog shows once, after checking that its copy button puts it on the clipboard. */
async function copiedLink(page: Page, dialogName: string, copyLabel: string): Promise<string> {
  const dialog = page.getByRole('dialog', { name: dialogName });
  await dialog.getByText('it is shown only once').waitFor();
  const url = (await dialog.locator('code').textContent()) ?? '';
  await dialog.getByRole('button', { name: copyLabel }).click();
  await dialog.getByText('Copied').waitFor();
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(url);
  return url;
}

describe('the Team and Audit log pages', () => {
  it('invites a member who joins, changes their role, resets their password, and records it all', async () => {
    const team = await createTeam(system, 'Crew');
    const admin = await openBrowserSession(browser, system.apiUrl);
    const guest = await openBrowserSession(browser, system.apiUrl, { viewport: PHONE });
    const page = admin.page;
    try {
      await signIn(page, team.admin);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' }).click();
      await page.getByRole('heading', { name: 'Team', level: 1 }).waitFor();
      const settings = page.getByRole('region', { name: 'Settings' });
      await settings.getByText('Crew').waitFor();
      expect(await settings.textContent()).toContain('The server’s default');
      await page.getByRole('heading', { name: 'No open invites' }).waitFor();

      // The last admin cannot be demoted: the API's refusal is shown.
      const adminRow = page.getByRole('row', { name: /Ada/ });
      await adminRow.getByRole('combobox', { name: 'Role of Ada' }).selectOption({ label: 'Member' });
      await page.getByRole('alert').getByText(/admin/i).waitFor();
      expect(await adminRow.getByRole('combobox', { name: 'Role of Ada' }).inputValue()).toBe('admin');

      // Invite: the link is shown once and copied.
      const email = `mia-${process.pid}-${Date.now()}@example.com`;
      await page.getByRole('button', { name: 'Invite someone' }).click();
      const form = page.getByRole('dialog', { name: 'Invite someone' });
      await form.getByLabel('Email').fill(email);
      await form.getByLabel('Role').selectOption({ label: 'Member' });
      await form.getByRole('button', { name: 'Invite' }).click();
      const inviteUrl = await copiedLink(page, 'Invite made', 'Copy the invite link');
      expect(inviteUrl).toContain('/dashboard/invite?token=');
      await page.getByRole('dialog', { name: 'Invite made' }).getByRole('button', { name: 'Done' }).click();
      await page.getByRole('row', { name: new RegExp(email) }).waitFor();
      await checkPage(admin, 'team');

      // The invitee opens the link in their own browser, signs up, and lands signed in without API keys.
      await guest.page.goto(inviteUrl);
      await guest.page.getByRole('heading', { name: 'Join Crew' }).waitFor();
      await guest.page.getByLabel('Your name').fill('Mia');
      await guest.page.getByLabel('Password').fill('mia-first-password');
      await checkPage(guest, 'invite-accept');
      await guest.page.getByRole('button', { name: 'Join the team' }).click();
      await guest.page.getByRole('button', { name: 'Menu' }).click();
      const nav = guest.page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Team' }).waitFor();
      expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
      // A member sees the team read-only, with the API's word on its members.
      await nav.getByRole('link', { name: 'Team' }).click();
      await guest.page.getByRole('status').getByText('Ask one of the team’s admins').waitFor();
      expect(await guest.page.getByRole('button', { name: 'Invite someone' }).count()).toBe(0);

      // The admin sees the new member, and makes them an admin.
      await page.reload();
      const miaRole = page.getByRole('combobox', { name: 'Role of Mia' });
      await miaRole.selectOption({ label: 'Admin' });
      await page.getByRole('heading', { name: 'No open invites' }).waitFor();
      await page.reload();
      await miaRole.waitFor();
      expect(await miaRole.inputValue()).toBe('admin');

      // A password-reset link, shown once, which the member follows.
      await page.getByRole('button', { name: 'Reset password for Mia' }).click();
      await page
        .getByRole('dialog', { name: 'Reset Mia’s password' })
        .getByRole('button', { name: 'Make the link' })
        .click();
      const resetUrl = await copiedLink(page, 'Reset Mia’s password', 'Copy the password-reset link');
      await page.getByRole('dialog', { name: 'Reset Mia’s password' }).getByRole('button', { name: 'Done' }).click();
      await guest.page.goto(resetUrl);
      await guest.page.getByLabel('New password', { exact: true }).fill('mia-second-password');
      await guest.page.getByRole('button', { name: 'Set password' }).click();
      await guest.page.getByText('Your password is changed').waitFor();
      await signIn(guest.page, { email, password: 'mia-second-password' });

      // The audit log, filtered to members' changes.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
      await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
      await page.getByRole('row', { name: /invites\.created/ }).waitFor();
      await page.getByLabel('Family or action').selectOption({ label: 'Members' });
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/action=members/);
      for (const action of ['members.created', 'members.updated', 'members.password_reset']) {
        await page
          .getByRole('row', { name: new RegExp(action.replace('.', '\\.')) })
          .first()
          .waitFor();
      }
      // The previous page's rows stay on screen while the filtered one loads: they go once it has come.
      await page
        .getByRole('row', { name: /invites\.created/ })
        .first()
        .waitFor({ state: 'detached' });
      expect(await page.getByRole('row', { name: /invites\.created/ }).count()).toBe(0);
      const updated = page.getByRole('row', { name: /members\.updated/ }).first();
      expect(await updated.textContent()).toContain(team.admin.email);
      await updated.getByRole('link', { name: `members: ${email}` }).click();
      await page.getByRole('heading', { name: 'Team', level: 1 }).waitFor();
      await page.goBack();
      await page
        .getByRole('row', { name: /members\.updated/ })
        .first()
        .waitFor();
      await checkPage(admin, 'audit-log');

      // By actor: the invitee's own changes are their joining.
      await page.getByLabel('Family or action').selectOption({ label: 'Every change' });
      await page.getByLabel('Actor').selectOption({ label: email });
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/actor_id=/);
      await waitFor('only the invitee’s changes', async () => {
        return (await page.getByRole('row', { name: /members\.updated/ }).count()) === 0;
      });
      await page.getByRole('row', { name: /members\.created/ }).waitFor();

      // Removing the member (with confirmation) ends their access to the team.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' }).click();
      await page.getByRole('button', { name: 'Remove Mia' }).click();
      await page
        .getByRole('dialog', { name: 'Remove Mia from the team?' })
        .getByRole('button', { name: 'Remove member' })
        .click();
      await page.getByRole('row', { name: /Mia/ }).waitFor({ state: 'detached' });

      expect(admin.problems()).toEqual([]);
      expect(guest.problems()).toEqual([]);
    } finally {
      await admin.close();
      await guest.close();
    }
  });

  it('revokes an open invite, whose link then fails', async () => {
    const team = await createTeam(system, 'Revokers');
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin, '/dashboard/team');
      await page.getByRole('heading', { name: 'Team', level: 1 }).waitFor();
      const email = `late-${process.pid}-${Date.now()}@example.com`;
      await page.getByRole('button', { name: 'Invite someone' }).click();
      await page.getByRole('dialog', { name: 'Invite someone' }).getByLabel('Email').fill(email);
      await page.getByRole('dialog', { name: 'Invite someone' }).getByRole('button', { name: 'Invite' }).click();
      const url = await copiedLink(page, 'Invite made', 'Copy the invite link');
      await page.getByRole('dialog', { name: 'Invite made' }).getByRole('button', { name: 'Done' }).click();
      await page.getByRole('button', { name: `Revoke the invite of ${email}` }).click();
      await page
        .getByRole('dialog', { name: `Revoke the invite of ${email}?` })
        .getByRole('button', { name: 'Revoke invite' })
        .click();
      await page.getByRole('heading', { name: 'No open invites' }).waitFor();
      await page.goto(url);
      await page.getByText('An invite works once and for 7 days').waitFor();
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
  it('shows the data retention the operator set, on the Team page and on the lists whose rows age out', async () => {
    const team = await createTeam(system, 'Keepers');
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin, '/dashboard/team');
      const settings = page.getByRole('region', { name: 'Settings' });
      await settings.getByText('30 days').waitFor();
      await system.admin('team', 'set-retention', '--team', team.teamId, '--days', '45');
      await page.reload();
      await settings.getByText('45 days').waitFor();
      expect(await settings.textContent()).toContain('Data retention');
      await checkPage(s, 'team-retention');

      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Emails' }).click();
      await page.getByRole('heading', { name: 'Emails', level: 1 }).waitFor();
      await page.getByText('Emails are kept for 45 days; older ones are deleted.').waitFor();
      await nav.getByRole('link', { name: 'Logs' }).click();
      await page.getByRole('heading', { name: 'Logs', level: 1 }).waitFor();
      await page.getByText('Logs are kept for 45 days; older ones are deleted.').waitFor();
      await checkPage(s, 'logs-retention');
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
