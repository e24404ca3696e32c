// The reputation guard's banner as a person sees it: while the team's sending is paused every page says so,
// with the rate measured against its line and the lines in force (here one the operator set for the team
// with the admin CLI); a member is told to ask an admin, an admin resumes it and the banner goes. In Chromium, against a running system. The pause is written into the sender's table as the
// guard writes it: the shared system keeps the default window (2,500 sends before it judges), which a
// browser test cannot send; services/sender/test/reputation.int.test.ts makes a pause by bouncing.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import type { Browser } from 'playwright-core';
import { createDb } from '@postline/platform';
import { useSystem, waitFor, type SharedSystem } from '@postline/testing';
import { launchBrowser, openBrowserSession } from '@postline/testing/browser';
import { SCHEMA } from '../../services/sender/src/config.ts';
import type { SenderDb } from '../../services/sender/src/db/schema.ts';
import { checkPage, createPerson, createTeam, signIn } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let db: Kysely<SenderDb>;
let team: Awaited<ReturnType<typeof createTeam>>;

async function reputation(): Promise<{ team: { paused: unknown }; thresholds: { bounce_rate: number } }> {
  const r = await fetch(`${system.apiUrl}/reputation`, { headers: { authorization: `Bearer ${team.apiKey}` } });
  return (await r.json()) as { team: { paused: unknown }; thresholds: { bounce_rate: number } };
}

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  db = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SCHEMA }).db;
  team = await createTeam(system, 'Bouncing');
  // The operator sets the team's bounce line; the gateway pushes it to the sender within seconds.
  await system.admin('team', 'set-reputation', '--team', team.teamId, '--bounce-rate', '0.05');
  await waitFor('the team’s line in force', async () => (await reputation()).thresholds.bounce_rate === 0.05, 30_000);
  await sql`insert into reputation_pauses
      (team_id, domain_id, domain_name, reason, sends, bounce_rate, complaint_rate, line, paused_at)
    values (${team.teamId}, '00000000-0000-0000-0000-000000000000', null, 'bounce_rate', 2600, 0.052, 0, 0.05, now())`.execute(
    db,
  );
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await db?.destroy();
});

describe('the reputation banner', () => {
  it('shows a member why sending is paused, and lets an admin resume it', async () => {
    const member = await createPerson(system, team.teamId, 'member', 'Mo');
    const s = await openBrowserSession(browser, system.apiUrl);
    try {
      await signIn(s.page, member, '/dashboard/emails');
      const banner = s.page.getByRole('alert', { name: 'Sending is paused' });
      await banner.waitFor();
      expect(await banner.textContent()).toContain('a bounce rate of 5.2% over its last 2600 sends, above the 5% line');
      expect(await banner.textContent()).toContain(
        'Sending pauses at a bounce rate above 5% or a complaint rate above 0.08% over the last 10,000 sends, judged from 2,500 sends. The bounce line was set for your team by the operator.',
      );
      await banner.getByText('An admin of the team can resume sending.').waitFor();
      expect(await banner.getByRole('button', { name: 'Resume sending' }).count()).toBe(0);
      await checkPage(s, 'reputation-paused-member');
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }

    const admin = await openBrowserSession(browser, system.apiUrl);
    try {
      await signIn(admin.page, team.admin, '/dashboard/domains');
      const banner = admin.page.getByRole('alert', { name: 'Sending is paused' });
      await banner.waitFor();
      await checkPage(admin, 'reputation-paused-admin');
      await banner.getByRole('button', { name: 'Resume sending' }).click();
      await banner.waitFor({ state: 'detached' });
      expect((await reputation()).team.paused).toBe(null);
      expect(admin.problems()).toEqual([]);
    } finally {
      await admin.close();
    }
  });
});
