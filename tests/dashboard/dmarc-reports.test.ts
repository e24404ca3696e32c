// A domain's DMARC reports as a person reads them: the suggested record's report address copied from the page,
// reports mailed to it through the real MX by the reporters' MTAs (Google's zip, Fastmail's RFC 9990 XML),
// then the domain's page showing the totals, the failing sources singled out, the sources and reporting
// organisations, on a desktop and a phone. In Chromium, against a running system.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { zipSync } from 'fflate';
import nodemailer from 'nodemailer';
import type { Browser } from 'playwright-core';
import { dataOf, testResend, uniqueDomain, useSystem, type SharedSystem } from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createTeam, signIn } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let domain: { id: string; name: string };

const FIXTURES = new URL('../../services/inbound-smtp/test/fixtures/dmarc/', import.meta.url);

/** A fixture report about `domain`, for yesterday (UTC): the page shows the last days. */
function report(name: string): Buffer {
  const today = Math.floor(Date.now() / 86_400_000) * 86_400;
  return Buffer.from(
    readFileSync(new URL(name, FIXTURES), 'utf8')
      .replaceAll('dmarc-test.example.com', domain.name)
      .replaceAll('1795737600', String(today - 86_400))
      .replace(/179582(3999|4000)/g, String(today - 1)),
  );
}

async function mailReport(
  to: string,
  attachment: { filename: string; content: Buffer | Uint8Array; contentType: string },
) {
  const info = await nodemailer
    .createTransport({ host: '127.0.0.1', port: system.smtp.mx, secure: false, tls: { rejectUnauthorized: false } })
    .sendMail({
      envelope: { from: 'reports@reporter.test', to: [to] },
      from: 'reports@reporter.test',
      to,
      subject: `Report domain: ${domain.name}`,
      text: 'An aggregate report.',
      attachments: [{ ...attachment, content: Buffer.from(attachment.content) }],
    });
  expect(info.response).toMatch(/^250 /);
}

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'DMARC');
  const name = uniqueDomain('dmarc-page');
  domain = { id: dataOf(await testResend(team.apiKey, system.apiUrl).domains.create({ name })).id, name };
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe("a domain's DMARC reports", () => {
  it('shows the report address to publish, then the reports mailed to it, failing sources first', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin, `/dashboard/domains/${domain.id}`);
      const reports = page.getByRole('region', { name: 'DMARC reports' });
      await reports.getByRole('heading', { name: 'No reports in this period' }).waitFor();
      const suggestion = page.getByRole('region', { name: 'Suggested: DMARC' });
      await suggestion.getByRole('button', { name: 'Copy the report address' }).click();
      await suggestion.getByText('Copied').first().waitFor();
      const address = String(await page.evaluate('navigator.clipboard.readText()'));
      expect(address).toMatch(new RegExp(`^dmarc\\+${domain.id.replaceAll('-', '')}@`));
      await expect(
        suggestion.getByRole('cell').filter({ hasText: 'v=DMARC1' }).locator('code').textContent(),
      ).resolves.toBe(`v=DMARC1; p=none; rua=mailto:${address};`);

      await mailReport(address, {
        filename: `google.com!${domain.name}!1!2.zip`,
        content: zipSync({ 'google.xml': report('google.xml') }),
        contentType: 'application/zip',
      });
      await mailReport(address, {
        filename: 'fastmail.xml',
        content: report('fastmail-rfc9990.xml'),
        contentType: 'text/xml',
      });
      await page.reload();

      const totals = reports.getByRole('definition');
      await reports.getByText('Messages reported').waitFor();
      expect(await totals.allTextContents()).toEqual([
        expect.stringMatching(/^137in 2 reports$/),
        expect.stringMatching(/^129/),
        expect.stringMatching(/^8/),
        expect.stringMatching(/^129/),
        expect.stringMatching(/^129/),
      ]);
      await reports.getByRole('alert').getByText('2 sources sent mail as').waitFor();
      const failing = reports.getByRole('table', { name: 'Failing sources' });
      const failingRows = failing.getByRole('row').filter({ has: page.getByRole('cell') });
      expect(await failingRows.allTextContents()).toEqual([
        expect.stringContaining('192.0.2.66'),
        expect.stringContaining('198.51.100.77'),
      ]);
      const sources = reports.getByRole('table', { name: 'By source IP' });
      await expect(
        sources
          .getByRole('row')
          .filter({ has: page.getByRole('cell') })
          .count(),
      ).resolves.toBe(3);
      const organisations = reports.getByRole('table', { name: 'By reporting organisation' });
      await organisations.getByRole('cell', { name: 'google.com' }).waitFor();
      await organisations.getByRole('cell', { name: 'Fastmail Pty Ltd' }).waitFor();
      await checkPage(s, 'domain-dmarc-reports');

      // The period is in the URL: a shorter one still holds yesterday's reports.
      await reports.getByLabel('Period').selectOption('7');
      await page.waitForURL(/dmarc_days=7/);
      await reports.getByText('in 2 reports').waitFor();
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('reads on a phone', async () => {
    const s = await openBrowserSession(browser, system.apiUrl, { viewport: PHONE });
    const { page } = s;
    try {
      await signIn(page, team.admin, `/dashboard/domains/${domain.id}?dmarc_days=30`);
      await page.getByRole('table', { name: 'Failing sources' }).waitFor();
      await checkPage(s, 'domain-dmarc-reports-phone');
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
