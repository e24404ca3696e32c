// The Deliverability page as a person reads it: each mailbox provider's traffic shaping, why a provider is
// held and when it is released, the rate now against its limit, the other mail servers counted (never
// named), and each sender process's own state. In Chromium, against a running system. Two sender processes'
// snapshots are written into the sender's table as those processes write them (one as a process of an older
// version did: a row per other MX domain, its reply whole): the shared system has one sender, and its real
// MX hosts are not Microsoft's or Yahoo's; tests/e2e/provider-shaping.test.ts holds a provider for real and
// reads the same API. The two processes have one name, as a container restarted within 30 s has.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import type { Browser } from 'playwright-core';
import { createDb } from '@postline/platform';
import { useSystem, type SharedSystem } from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { SCHEMA } from '../../services/sender/src/config.ts';
import type { ProviderShapingTable, SenderDb } from '../../services/sender/src/db/schema.ts';
import { checkPage, createPerson, createTeam, signIn, type Person } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let db: Kysely<SenderDb>;
let member: Person;

const A = { process_id: randomUUID(), replica: 'sender-7f9c (pid 1)', sending_ip: '203.0.113.5' };
const B = { process_id: randomUUID(), replica: 'sender-7f9c (pid 1)', sending_ip: '203.0.113.6' };
const shortId = (p: typeof A) => p.process_id.slice(0, 8);
const MICROSOFT_REPLY =
  '451 4.7.650 The mail server [203.0.113.5] has been temporarily rate limited due to IP reputation.';
const YAHOO_REPLY = '421 4.7.0 [TSS04] Messages from 203.0.113.5 temporarily deferred due to unexpected volume';
/** Another team's recipient's company, running its own mail server: never on the page. */
const COMPANY = 'acme-legal.example';

type Row = Omit<ProviderShapingTable, 'process_id' | 'replica' | 'sending_ip' | 'updated_at'>;
const base = {
  connections: 0,
  max_connections: 10,
  max_messages_per_connection: 100,
  deferrals: 0,
  servers_slowed: null,
  servers_held: null,
  servers_first_held_until: null,
};
const others = { ...base, provider: 'other' as const, rate_per_minute: 0, limit_per_minute: 0, max_connections: 0 };

/** Counts, in window.liveChanges, each change to the live region that announces holds. */
const COUNT_LIVE_CHANGES = `(() => {
  const region = [...document.querySelectorAll('[role=status]')].find((e) => e.textContent.includes('is held'));
  window.liveChanges = 0;
  new MutationObserver((records) => (window.liveChanges += records.length))
    .observe(region, { subtree: true, childList: true, characterData: true });
})()`;

/** Writes the two processes' snapshots as fresh (a snapshot not refreshed for 30 s is left out). */
async function writeSnapshots(): Promise<void> {
  const heldUntil = new Date(Date.now() + 7 * 60_000 + 30_000);
  const rows: [typeof A, Row][] = [
    [
      A,
      {
        ...base,
        key: 'microsoft',
        provider: 'microsoft',
        state: 'held',
        rate_per_minute: 60,
        limit_per_minute: 1200,
        reason: MICROSOFT_REPLY,
        held_until: heldUntil,
      },
    ],
    [
      B,
      {
        ...base,
        key: 'microsoft',
        provider: 'microsoft',
        state: 'slowed',
        rate_per_minute: 600,
        limit_per_minute: 1200,
        connections: 4,
        reason: MICROSOFT_REPLY,
        held_until: null,
      },
    ],
    [
      A,
      {
        ...base,
        key: 'yahoo',
        provider: 'yahoo',
        state: 'slowed',
        rate_per_minute: 300,
        limit_per_minute: 1200,
        connections: 2,
        deferrals: 3,
        reason: YAHOO_REPLY,
        held_until: null,
      },
    ],
    [
      B,
      {
        ...base,
        key: 'apple',
        provider: 'apple',
        state: 'normal',
        rate_per_minute: 1200,
        limit_per_minute: 1200,
        connections: 1,
        reason: null,
        held_until: null,
      },
    ],
    // B counts the other mail servers it slows or holds; A, of an older version, wrote one of them by name.
    [
      B,
      {
        ...others,
        key: 'other',
        state: 'held',
        reason: '450 4.7.1',
        held_until: heldUntil,
        servers_slowed: 2,
        servers_held: 1,
        servers_first_held_until: heldUntil,
      },
    ],
    [
      A,
      {
        ...others,
        key: `other:${COMPANY}`,
        state: 'slowed',
        rate_per_minute: 300_000,
        limit_per_minute: 600_000,
        reason: `450 4.7.1 <bob@${COMPANY}>: Recipient address rejected: Greylisted`,
        held_until: null,
      },
    ],
  ];
  await db
    .insertInto('provider_shaping')
    .values(rows.map(([process, row]) => ({ ...process, ...row, updated_at: sql<Date>`now()` })))
    .onConflict((oc) =>
      oc.columns(['process_id', 'key']).doUpdateSet((eb) => ({ updated_at: eb.ref('excluded.updated_at') })),
    )
    .execute();
}

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  db = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SCHEMA }).db;
  const team = await createTeam(system, 'Deliverability');
  member = await createPerson(system, team.teamId, 'member', 'Mo');
}, 90_000);

afterAll(async () => {
  await db?.deleteFrom('provider_shaping').where('process_id', 'in', [A.process_id, B.process_id]).execute();
  await browser?.close();
  await db?.destroy();
});

describe('the Deliverability page', () => {
  it('tells a member why mail to a provider is held and when it is released, per provider and process', async () => {
    await writeSnapshots();
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, member, '/dashboard/emails');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Deliverability' }).click();
      await page.getByRole('heading', { name: 'Deliverability', level: 1 }).waitFor();

      // The banner tells until when, in how long, and the reply; the live region only that it is held.
      const held = page.getByRole('region', { name: 'Mail to Microsoft is held' });
      await held.waitFor();
      expect(await held.textContent()).toContain(MICROSOFT_REPLY);
      expect(await held.textContent()).toMatch(/\(in [78] minutes\)/);
      const announced = page.getByRole('status').filter({ hasText: 'is held' });
      expect(await announced.textContent()).toBe('Mail to Microsoft is held.');
      expect(await page.getByRole('alert').count()).toBe(0);

      // The install's figures: the worst state of the two processes, their rates and sessions summed.
      const providers = page.getByRole('table', { name: 'Mailbox providers' });
      const microsoft = providers.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Microsoft' }) });
      expect(await microsoft.getByRole('cell').allInnerTexts()).toEqual([
        'held',
        '660 of 2,400 a minute',
        '4 of 20\n100 messages per session',
        MICROSOFT_REPLY,
        expect.stringMatching(/in [78] minutes$/),
      ]);
      expect(
        await microsoft.getByRole('meter', { name: 'Microsoft: allowed rate, 28% of its limit' }).getAttribute('value'),
      ).toBe('0.275');
      const yahoo = providers.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Yahoo' }) });
      expect(await yahoo.getByRole('cell').allInnerTexts()).toEqual([
        'slowed',
        '300 of 1,200 a minute',
        '2 of 10\n100 messages per session',
        `${YAHOO_REPLY}\n3 deferrals in a row`,
        'not held',
      ]);
      // Held first, then slowed, then the rest.
      const order = await providers.getByRole('rowheader').allTextContents();
      expect(order.indexOf('Microsoft')).toBeLessThan(order.indexOf('Yahoo'));
      expect(order.indexOf('Yahoo')).toBeLessThan(order.indexOf('Apple'));

      // The other mail servers: counted over the processes, none named, their reply by its codes.
      // The shared system's own sender process adds the servers other files' deliveries slowed: at least
      // this file's three slowed and one held.
      const otherServers = page.locator('p').filter({ hasText: 'Other mail servers:' });
      const counted =
        /^Other mail servers: (\d+) slowed, (\d+) held \((?:released in [78] minutes|the first released in \d+ minutes?, the last in \d+ minutes)\)\. The worst answered \d{3}(?: \d\.\d{1,3}\.\d{1,3})?\. /.exec(
          (await otherServers.textContent()) ?? '',
        );
      expect(counted).not.toBeNull();
      expect(Number(counted![1])).toBeGreaterThanOrEqual(3);
      expect(Number(counted![2])).toBeGreaterThanOrEqual(1);
      const shown = await page.locator('main').innerHTML();
      expect(shown).not.toContain(COMPANY);
      expect(shown).not.toContain('@');

      // Each process's own row: the held one and the one still sending, with their addresses, and their ids
      // (both processes have one name).
      const processes = page.getByRole('table', { name: 'Sender processes' });
      const rowOf = (ip: string, provider: string) =>
        processes
          .getByRole('row')
          .filter({ has: page.getByRole('rowheader', { name: provider }) })
          .filter({ hasText: ip });
      expect(await rowOf(A.sending_ip, 'Microsoft').getByRole('cell').allInnerTexts()).toEqual([
        `${A.replica}\nid ${shortId(A)}`,
        A.sending_ip,
        'held',
        expect.any(String),
        expect.any(String),
        expect.any(String),
        expect.any(String),
      ]);
      expect(await rowOf(B.sending_ip, 'Microsoft').getByRole('cell').nth(0).innerText()).toBe(
        `${B.replica}\nid ${shortId(B)}`,
      );
      expect(await rowOf(B.sending_ip, 'Microsoft').getByRole('cell').nth(2).textContent()).toBe('slowed');
      await checkPage(s, 'deliverability');

      // While the same providers are held the live region says nothing new, though the countdown changes.
      await page.evaluate(COUNT_LIVE_CHANGES);
      await db
        .updateTable('provider_shaping')
        .set({ held_until: new Date(Date.now() + 12 * 60_000 + 30_000), updated_at: sql<Date>`now()` })
        .where('process_id', '=', A.process_id)
        .where('key', '=', 'microsoft')
        .execute();
      await held.filter({ hasText: /\(in 1[23] minutes\)/ }).waitFor();
      expect(await page.evaluate('window.liveChanges')).toBe(0);

      // A process that stopped refreshing its rows (killed) is no longer shown.
      await sql`update provider_shaping set updated_at = now() - interval '31 seconds'
        where process_id = ${A.process_id}`.execute(db);
      await page.reload();
      await providers.getByRole('rowheader', { name: 'Apple' }).waitFor();
      expect(await providers.getByRole('rowheader', { name: 'Yahoo' }).count()).toBe(0);
      expect(await page.getByRole('region', { name: 'Mail to Microsoft is held' }).count()).toBe(0);
      expect(await microsoft.getByRole('cell').first().textContent()).toBe('slowed');
      // The other process's own other servers still count (2 slowed, 1 held), with the shared sender's.
      const left = /^Other mail servers: (\d+) slowed, (\d+) held/.exec((await otherServers.textContent()) ?? '');
      expect(left).not.toBeNull();
      expect(Number(left![1])).toBeGreaterThanOrEqual(2);
      expect(Number(left![2])).toBeGreaterThanOrEqual(1);
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('fits a phone', async () => {
    await writeSnapshots();
    const s = await openBrowserSession(browser, system.apiUrl, { viewport: PHONE });
    try {
      await signIn(s.page, member, '/dashboard/deliverability');
      await s.page.getByRole('region', { name: 'Mail to Microsoft is held' }).waitFor();
      await checkPage(s, 'deliverability-phone');
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
