// The Domains pages as a person uses them: a domain added in the browser, its records copied from the page into
// the file's DNS server, verified with the Verify button; tracking turned on with a tracking subdomain, whose
// records the page sees verified by itself (it polls while checks are pending); TLS enforced; the domain
// deleted after a confirmation. A name another team added is claimed by the TXT record its claim page shows.
// Another team's domain is not found. In Chromium, against a running system.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser, Locator, Page } from 'playwright-core';
import { dataOf, testResend, useSystem, type DnsRecord, type SharedSystem } from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createTeam, signIn } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let other: Awaited<ReturnType<typeof createTeam>>;

/** Record names on the page are relative to the zone (example.com for every domain here), or already full. */
const ZONE = 'example.com';
const fqdnOf = (name: string) => (name === ZONE || name.endsWith(`.${ZONE}`) ? name : `${name}.${ZONE}`);
const unique = (prefix: string) => `${prefix}-${process.pid}-${Date.now()}.${ZONE}`;

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'Domains');
  other = await createTeam(system, 'Elsewhere');
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

type ShownRecord = { record: string; type: string; name: string; value: string; priority: string; status: string };

/** The records the page shows now, each value read through its copy button as a person copies it. */
async function copyRecords(page: Page, region: Locator): Promise<ShownRecord[]> {
  const rows = region.getByRole('row').filter({ has: page.getByRole('cell') });
  const shown: ShownRecord[] = [];
  for (const row of await rows.all()) {
    const cells = row.getByRole('cell');
    const record = (await row.getByRole('rowheader').textContent()) ?? '';
    const type = (await cells.nth(0).textContent()) ?? '';
    const name = (await cells.nth(1).locator('code').textContent()) ?? '';
    await row.getByRole('button', { name: `Copy the ${record} ${type} value`, exact: true }).click();
    await row.getByText('Copied').first().waitFor();
    const value = String(await page.evaluate('navigator.clipboard.readText()'));
    const priority = (await cells.nth(3).textContent()) ?? '';
    const status = (await cells.nth(5).textContent()) ?? '';
    shown.push({ record, type, name, value, priority, status });
  }
  return shown;
}

/** Publishes a record as a person would at their DNS provider: the fake DNS server holds the team's zone. */
function publish(record: ShownRecord, value: string | string[] = record.value): void {
  const fqdn = fqdnOf(record.name);
  const answer: DnsRecord =
    record.type === 'MX'
      ? { type: 'MX', exchange: String(value), priority: Number(record.priority) }
      : record.type === 'CNAME'
        ? { type: 'CNAME', target: String(value) }
        : { type: 'TXT', value };
  world.dns.add(fqdn, [answer]);
}

describe('the Domains pages', () => {
  it('adds a domain, publishes its records from the page, verifies it, turns tracking on and deletes it', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    const name = unique('dash');
    try {
      await signIn(page, team.admin);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Domains' }).click();
      await page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor();
      await page.getByRole('heading', { name: 'No domains yet' }).waitFor();

      // A bad name is refused with the API's own message; a good one opens the domain's page.
      await page.getByRole('button', { name: 'Add domain' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add domain' });
      await dialog.getByLabel('Domain name').fill('localhost');
      await dialog.getByRole('button', { name: 'Add', exact: true }).click();
      await dialog.getByRole('alert').waitFor();
      expect(await dialog.getByRole('alert').textContent()).toContain('validation_error');
      await dialog.getByLabel('Domain name').fill(name);
      await dialog.getByLabel('Region').selectOption('eu-west-1');
      await dialog.getByLabel('Return path').fill('bounces');
      await dialog.getByLabel('Receive email at this domain').check();
      await dialog.getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByRole('heading', { name, level: 1 }).waitFor();
      await page.getByText('Checks are under way').waitFor();

      // The records, copied from the page: DKIM, the return path's MX and SPF TXT, the receiving MX.
      const recordsRegion = page.getByRole('region', { name: 'DNS records' });
      const records = await copyRecords(page, recordsRegion);
      expect(records.map((r) => `${r.record} ${r.type}`)).toEqual(['DKIM TXT', 'SPF MX', 'SPF TXT', 'Receiving MX']);
      expect(records.find((r) => r.record === 'SPF')?.name).toBe(`bounces.${name.slice(0, -ZONE.length - 1)}`);
      expect(records.every((r) => ['not started', 'pending'].includes(r.status))).toBe(true);
      await page.getByText(`bounces.${name}`).waitFor();
      // The DKIM key is longer than one TXT string: the page says so and offers it split, which we publish.
      const dkim = records.find((r) => r.record === 'DKIM')!;
      expect(dkim.value.length).toBeGreaterThan(255);
      await recordsRegion.getByText('one TXT string holds at most 255').waitFor();
      await recordsRegion.getByRole('button', { name: 'Copy the DKIM TXT value split into strings' }).click();
      const split = String(await page.evaluate('navigator.clipboard.readText()'));
      const strings = [...split.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
      expect(strings.length).toBe(2);
      expect(strings.join('')).toBe(dkim.value);
      publish(dkim, strings);
      for (const record of records.filter((r) => r !== dkim)) publish(record);

      // The suggested DMARC record, named in the same zone.
      const dmarc = page.getByRole('region', { name: 'Suggested: DMARC' });
      // Monitoring only, its reports sent to the domain's own report address at our MX.
      await dmarc.getByText(/^v=DMARC1; p=none; rua=mailto:dmarc\+[0-9a-f]{32}@[^;]+;$/).waitFor();
      expect(await dmarc.getByRole('cell').nth(1).locator('code').textContent()).toBe(
        `_dmarc.${name.slice(0, -ZONE.length - 1)}`,
      );

      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('status').getByText('Checked just now.').waitFor();
      await page.getByText('Checks are under way').waitFor({ state: 'detached' });
      const verified = await copyRecords(page, recordsRegion);
      expect(verified.map((r) => r.status)).toEqual(['verified', 'verified', 'verified', 'verified']);

      // Tracking on, with a tracking subdomain: its two records appear, not started.
      const tracking = page.getByRole('form', { name: 'Tracking' });
      await tracking.getByLabel('Open tracking').check();
      await tracking.getByLabel('Tracking subdomain').fill('links');
      await tracking.getByRole('button', { name: 'Save tracking' }).click();
      await page.getByText('Tracking settings saved.').waitFor();
      await page.getByText('Checks are under way').waitFor();
      const resend = testResend(team.apiKey, system.apiUrl);
      const id = new URL(page.url()).pathname.split('/').pop()!;
      const stored = dataOf(await resend.domains.get(id));
      expect(stored).toMatchObject({ name, open_tracking: true, click_tracking: false, tracking_subdomain: 'links' });
      const withTracking = await copyRecords(page, recordsRegion);
      const cname = withTracking.find((r) => r.record === 'Tracking')!;
      expect(cname).toMatchObject({ type: 'CNAME', name: `links.${name.slice(0, -ZONE.length - 1)}` });
      expect(withTracking.find((r) => r.record === 'TrackingCAA')).toMatchObject({ type: 'CAA', name: ZONE });
      // The CNAME published (and no CAA anywhere, which lets any CA issue), a check runs elsewhere (the API's
      // verify): the page, polling while checks are pending, shows both verified without being touched.
      publish(cname);
      dataOf(await resend.domains.verify(stored.id));
      await page.getByText('Checks are under way').waitFor({ state: 'detached' });
      const trackingTable = page.getByRole('table', { name: 'Tracking records' });
      expect((await copyRecords(page, trackingTable)).map((r) => r.status)).toEqual(['verified', 'verified']);
      await checkPage(s, 'domain-detail');
      // The form shows the stored settings after a reload; turning open tracking off again saves too.
      await page.reload();
      expect(await tracking.getByLabel('Open tracking').isChecked()).toBe(true);
      await tracking.getByLabel('Open tracking').uncheck();
      await tracking.getByRole('button', { name: 'Save tracking' }).click();
      await page.getByText('Tracking settings saved.').waitFor();
      expect(dataOf(await resend.domains.get(stored.id)).open_tracking).toBe(false);

      // Enforced TLS: the choice is saved, shown among the facts and answered by the API.
      const tls = page.getByRole('form', { name: 'Delivery encryption' });
      expect(await tls.getByLabel('Opportunistic').isChecked()).toBe(true);
      await tls.getByLabel('Enforced').check();
      await tls.getByRole('button', { name: 'Save encryption' }).click();
      await page.getByText('Delivery encryption saved.').waitFor();
      expect((dataOf(await resend.domains.get(stored.id)) as { tls?: string }).tls).toBe('enforced');
      await page.reload();
      expect(await tls.getByLabel('Enforced').isChecked()).toBe(true);

      // The list shows it verified, linking to its page.
      await page.getByRole('link', { name: '← Domains' }).click();
      const row = page.getByRole('row', { name: new RegExp(name.replaceAll('.', '\\.')) });
      await row.getByText('verified').waitFor();
      expect(await row.textContent()).toContain('eu-west-1');
      await checkPage(s, 'domains');
      await row.getByRole('link', { name }).click();

      // Delete, after a confirmation: back on the list, which no longer has it; the API does not either.
      await page.getByRole('button', { name: `Delete ${name}` }).click();
      const confirm = page.getByRole('dialog', { name: `Delete ${name}?` });
      await confirm.getByText('adding the domain again gives it a new key').waitFor();
      await confirm.getByRole('button', { name: 'Delete domain' }).click();
      await page.getByRole('heading', { name: 'No domains yet' }).waitFor();
      expect((await resend.domains.get(stored.id)).error?.statusCode).toBe(404);

      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('claims a name another team added, by the TXT record its claim page shows', async () => {
    const name = unique('claimed');
    const theirs = dataOf(await testResend(other.apiKey, system.apiUrl).domains.create({ name }));
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin, '/dashboard/domains');
      await page.getByRole('button', { name: 'Add domain' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add domain' });
      await dialog.getByLabel('Domain name').fill(name);
      await dialog.getByRole('button', { name: 'Add', exact: true }).click();
      await dialog.getByRole('alert').getByText('has been registered already').waitFor();
      await dialog.getByRole('button', { name: `Claim ${name}` }).click();

      // The claim's page: the TXT record to publish at the name itself, each part copied from the page.
      await page.getByRole('heading', { name: `Claim ${name}`, level: 1 }).waitFor();
      await page.getByText('pending', { exact: true }).waitFor();
      const copy = async (what: string) => {
        await page.getByRole('button', { name: `Copy the claim record's ${what}` }).click();
        await page.getByText('Copied').waitFor();
        return String(await page.evaluate('navigator.clipboard.readText()'));
      };
      expect(await copy('name')).toBe(name);
      const value = await copy('value');
      expect(value).toMatch(/^postline-domain-verification=[0-9a-f]{48}$/);
      await checkPage(s, 'domain-claim');

      // Verify before the record is published: still pending, and the page says so.
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('status').getByText('The record was not found yet').waitFor();
      world.dns.add(name, [{ type: 'TXT', value }]);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByText(`${name} is now this team’s.`).waitFor();
      await page.getByRole('link', { name: 'its page' }).click();
      await page.getByRole('heading', { name, level: 1 }).waitFor();
      // The other team's domain is gone; the name is this team's, under the claim's id.
      expect((await testResend(other.apiKey, system.apiUrl).domains.get(theirs.id)).error?.statusCode).toBe(404);
      const id = new URL(page.url()).pathname.split('/').pop()!;
      expect(dataOf(await testResend(team.apiKey, system.apiUrl).domains.get(id)).name).toBe(name);

      // Adding it again: the team has it, so the refusal offers no claim.
      await page.getByRole('link', { name: '← Domains' }).click();
      await page.getByRole('button', { name: 'Add domain' }).click();
      await dialog.getByLabel('Domain name').fill(name);
      await dialog.getByRole('button', { name: 'Add', exact: true }).click();
      await dialog.getByRole('alert').getByText('has been registered already').waitFor();
      expect(await dialog.getByRole('button', { name: `Claim ${name}` }).count()).toBe(0);
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it("shows another team's domain as not found, and a domain's page at phone width", async () => {
    const theirs = dataOf(await testResend(other.apiKey, system.apiUrl).domains.create({ name: unique('theirs') }));
    const ours = dataOf(await testResend(team.apiKey, system.apiUrl).domains.create({ name: unique('phone') }));
    const s = await openBrowserSession(browser, system.apiUrl, { viewport: PHONE });
    const { page } = s;
    try {
      await signIn(page, team.admin, `/dashboard/domains/${theirs.id}`);
      await page.getByRole('heading', { name: 'Domain not found', level: 1 }).waitFor();
      await page.getByRole('alert').getByText('Domain not found').waitFor();
      expect(await page.content()).not.toContain(theirs.name);

      await page.goto(`/dashboard/domains/${ours.id}`);
      await page.getByRole('heading', { name: ours.name, level: 1 }).waitFor();
      await page.getByRole('region', { name: 'DNS records' }).getByRole('row').nth(1).waitFor();
      await checkPage(s, 'domain-detail-phone');
      // A domain keeps at least one capability: the API's refusal is shown by its message.
      const capabilities = page.getByRole('form', { name: 'Sending and receiving' });
      await capabilities.getByLabel('Sending').uncheck();
      await capabilities.getByRole('button', { name: 'Save sending and receiving' }).click();
      await capabilities.getByRole('alert').getByText('At least one of').waitFor();
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
