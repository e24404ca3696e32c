// The Emails pages as a person uses them to answer "my email never arrived": emails sent with the official
// resend SDK to the file's MX, which takes one (250), greylists another once (451, then 250) and refuses a
// third (550 5.1.1), are found by their filters, and each email's page shows what its recipient's server
// said, each attempt's SMTP conversation, its timeline with the webhook it caused, the API request that sent
// it and its insights; the preview is sandboxed, with remote images off until asked; a scheduled email is
// rescheduled and canceled. The Metrics page counts them.
// Another team's email is not found. In Chromium, against a running system.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  dataOf,
  defaultSinkBehaviour,
  startWebhookReceiver,
  testResend,
  useSystem,
  waitFor,
  type SharedSystem,
  type WebhookReceiver,
} from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createTeam, problemsBesidesThePreview, signIn, startImageHost } from './people.ts';

jest.setTimeout(120_000);

/** Recipients whose first attempt the MX greylists (451), then takes. */
const deferOnce = new Set<string>();
// The emails test's system (its SMTP back-off shrunk), so that a deferred recipient is retried at once.
const world = useSystem({
  env: { POSTLINE_DELAY_SCALE: '0.00002' },
  sink: {
    behaviour: (rcpt) => {
      const local = rcpt.split('@')[0] ?? '';
      if (deferOnce.delete(local)) return 451;
      return defaultSinkBehaviour(rcpt);
    },
  },
});
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let resend: Resend;
let domain: string;
/** A stand-in for an image host a sender's email points at, counting the requests it gets. */
let images: Awaited<ReturnType<typeof startImageHost>>;
let imageHost: string;
/** The team's webhook endpoint, subscribed to email.delivered. */
let receiver: WebhookReceiver;
const stamp = Date.now().toString(36);
const ids: Record<'ok' | 'deferred' | 'bounced' | 'scheduled', string> = {
  ok: '',
  deferred: '',
  bounced: '',
  scheduled: '',
};
const rcpt = (local: string) => `${local}-${stamp}@${world.rcptDomain}`;

beforeAll(async () => {
  ({ system } = world);
  images = await startImageHost();
  imageHost = images.origin;
  const imageUrl = `${imageHost}/logo.gif`;
  browser = await launchBrowser();
  team = await createTeam(system, 'Mailroom');
  resend = testResend(team.apiKey, system.apiUrl);
  domain = `emails-${stamp}.example.com`;
  await createVerifiedDomain({ resend, dns: world.dns, env: system.env, name: domain });
  const send = async (to: string, subject: string, extra: Record<string, unknown> = {}) =>
    dataOf(
      await resend.emails.send({
        from: `Acme <orders@${domain}>`,
        to,
        subject,
        html: `<h1>${subject}</h1><p>Thanks!</p><img src="${imageUrl}" alt="Acme"><script>document.title='ran'</script>`,
        ...extra,
      } as Parameters<Resend['emails']['send']>[0]),
    ).id;
  receiver = await startWebhookReceiver();
  dataOf(await resend.webhooks.create({ endpoint: `${receiver.url}/emails`, events: ['email.delivered'] }));
  deferOnce.add(`later-${stamp}`);
  ids.ok = await send(rcpt('ada'), `Order 1042 ${stamp}`);
  ids.deferred = await send(rcpt('later'), `Order 1043 ${stamp}`);
  ids.bounced = await send(rcpt('hard'), `Order 1044 ${stamp}`);
  ids.scheduled = await send(rcpt('ada'), `Reminder ${stamp}`, {
    scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
    text: 'A reminder, in words.',
  });
}, 90_000);

afterAll(async () => {
  await receiver?.close();
  await browser?.close();
  await images?.close();
});

async function openEmails(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Emails' }).click();
  await page.getByRole('heading', { name: 'Emails', level: 1 }).waitFor();
}

describe('the Emails pages', () => {
  it('finds each email by a filter and shows what its recipient’s server said', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin);
      await openEmails(page);
      for (const subject of ['1042', '1043', '1044'])
        await page.getByRole('link', { name: `Order ${subject} ${stamp}` }).waitFor();
      await checkPage(s, 'emails');

      // The whole list as CSV, as the browser saves it: every email, newest first.
      const saving = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Export CSV' }).click();
      const saved = await saving;
      expect(saved.suggestedFilename()).toBe('emails.csv');
      const csv = await new Response(Readable.toWeb(await saved.createReadStream()) as ReadableStream).text();
      const subjects = csv.split('\r\n').filter((line) => line.includes(`Order 10`));
      expect(subjects.map((line) => /Order (\d+)/.exec(line)![1])).toEqual(['1044', '1043', '1042']);

      // The refused one, found by its recipient: the server's 550 and the bounce's type.
      await page.getByLabel('To', { exact: true }).fill(rcpt('hard'));
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/to=hard/);
      await waitFor('one email listed', async () => (await page.getByRole('row', { name: /Order/ }).count()) === 1);
      await page.getByRole('link', { name: `Order 1044 ${stamp}` }).click();
      await page.getByRole('heading', { name: `Order 1044 ${stamp}`, level: 1 }).waitFor();
      const recipients = page.getByRole('region', { name: 'Recipients' });
      const hard = recipients.getByRole('row', { name: new RegExp(rcpt('hard')) });
      await hard.getByText('bounced', { exact: true }).waitFor();
      expect(await hard.textContent()).toContain('Permanent');
      expect(await hard.getByRole('cell').nth(2).textContent()).toMatch(/^550 .*5\.1\.1/);
      await page
        .getByRole('list', { name: 'Events' })
        .getByText(/Permanent/)
        .waitFor();

      // The deferred one, found by its last event once delivered: two attempts, the last one 250.
      await waitFor(
        'the deferred email delivered',
        async () => dataOf(await resend.emails.get(ids.deferred)).last_event === 'delivered',
      );
      await page.goto(`/dashboard/emails?last_event=delivered&subject=${encodeURIComponent(`1043 ${stamp}`)}`);
      await page.getByRole('link', { name: `Order 1043 ${stamp}` }).click();
      const later = recipients.getByRole('row', { name: new RegExp(rcpt('later')) });
      await later.getByText('delivered', { exact: true }).waitFor();
      expect(await later.getByRole('cell').nth(1).textContent()).toBe('2');
      expect(await later.getByRole('cell').nth(2).textContent()).toMatch(/^250 /);
      // Each attempt with the MX, the address dialled, its TLS and the conversation: 451, then 250.
      const attempts = page.getByRole('region', { name: 'Delivery attempts' }).getByRole('listitem');
      await attempts.nth(1).waitFor();
      expect(await attempts.count()).toBe(2);
      const first = attempts.nth(0);
      await first.getByRole('heading', { name: `Attempt 1 to mx1.${world.rcptDomain}` }).waitFor();
      expect(await first.textContent()).toContain(`${world.sink.host}:`);
      expect(await first.textContent()).toMatch(/TLSv1\.[23]/);
      await first.getByText(/^SMTP conversation/).click();
      await first.getByText(`RCPT TO:<later-${stamp}@${world.rcptDomain}>`, { exact: false }).waitFor();
      expect(await first.textContent()).toContain('S: 451 4.7.1 Greylisted, please try again later');
      expect(await first.textContent()).toContain('Server said451 4.7.1 Greylisted');
      await attempts
        .nth(1)
        .getByRole('heading', { name: `Attempt 2 to mx1.${world.rcptDomain}` })
        .waitFor();
      expect(await attempts.nth(1).textContent()).toMatch(/Server said250 2\.0\.0 Queued/);
      // The timeline: sent, delayed, delivered.
      // (Each event's item, not the items of the webhook deliveries listed within it.)
      const timeline = page
        .getByRole('list', { name: 'Events' })
        .getByRole('listitem')
        .filter({ hasNotText: /^Webhook to/ });
      await timeline.nth(2).waitFor();
      expect(await timeline.allTextContents()).toEqual([
        expect.stringMatching(/sent/),
        expect.stringMatching(/delivery delayed.*later-/),
        expect.stringMatching(/delivered.*later-/),
      ]);

      // Insights: the From domain publishes no DMARC record (needs attention); nothing else to improve.
      const insights = page.getByRole('region', { name: 'Insights' });
      await insights
        .getByRole('region', { name: 'Needs attention' })
        .getByText('Fix: A DMARC record for the From domain')
        .waitFor();
      expect(await insights.getByRole('region', { name: 'Needs attention' }).textContent()).toContain(
        `Neither _dmarc.${domain} nor its organisational domain has a DMARC record`,
      );
      await insights.getByRole('region', { name: 'Could improve' }).getByText('Nothing to improve.').waitFor();

      // The preview: sandboxed (its script did not run), the remote image not fetched until asked.
      const preview = page.getByTitle('Preview of the email').contentFrame();
      await preview.getByRole('heading', { name: `Order 1043 ${stamp}` }).waitFor();
      expect(images.requests()).toBe(0);
      await page.getByRole('button', { name: 'Show remote images' }).click();
      await waitFor('the remote image to be fetched', () => images.requests() > 0);
      await preview.getByRole('img', { name: 'Acme' }).waitFor();
      // Chromium never reports a sandboxed frame's network idle: the page is checked once its content is in.
      await page.getByRole('region', { name: 'Recipients' }).getByRole('row').nth(1).waitFor();
      await checkPage(s, 'email-detail', { waitForNetworkIdle: false });
      // A share link for someone without an account: it shows the email.
      await page.getByRole('button', { name: 'Share' }).click();
      const shareDialog = page.getByRole('dialog', { name: 'Share the email' });
      await shareDialog.getByLabel('The link works for').selectOption({ label: 'One day' });
      await shareDialog.getByRole('button', { name: 'Make the link' }).click();
      const made = page.getByRole('dialog', { name: 'Share link made' });
      await made.getByText('for one day').waitFor();
      // Focus follows the link into the dialog rather than falling back to the page.
      expect(await page.evaluate("Boolean(document.activeElement?.closest('dialog, [role=dialog]'))")).toBe(true);
      await made.getByRole('button', { name: 'Copy the share link' }).click();
      const shareUrl = String(await page.evaluate('navigator.clipboard.readText()'));
      expect(await (await fetch(shareUrl)).text()).toContain(`Order 1043 ${stamp}`);
      await made.getByRole('button', { name: 'Done' }).click();

      // The source, as sent.
      await page.getByRole('tab', { name: 'HTML' }).click();
      expect(await page.getByRole('tabpanel').textContent()).toContain("<script>document.title='ran'</script>");
      await page.getByRole('tab', { name: 'Text' }).click();
      await page.getByRole('tabpanel').getByText('made from the HTML').waitFor();
      // As it went out: the header block, signed with the domain's DKIM key.
      await page.getByRole('tab', { name: 'As delivered' }).click();
      await page.getByRole('tabpanel').getByText(`Signed with DKIM by ${domain}`, { exact: false }).waitFor();
      expect(await page.getByRole('tabpanel').textContent()).toContain(`Subject: Order 1043 ${stamp}`);

      // The webhook the delivery caused, linked to its attempts.
      await receiver.waitFor('the delivered webhook', (ds) => ds.some((d) => d.json.data.email_id === ids.deferred));
      const hook = page.getByRole('link', { name: `Webhook to ${receiver.url}/emails` });
      // Recorded by the dispatcher once the receiver answered: the page is read again until it shows it.
      await waitFor(
        'the webhook delivery shown',
        async () => {
          await page.reload();
          return hook.waitFor({ timeout: 3000 }).then(
            () => true,
            () => false,
          );
        },
        30_000,
      );
      await hook.click();
      await page.getByRole('heading', { name: 'email.delivered', level: 1 }).waitFor();
      await page.getByRole('region', { name: 'Attempts' }).getByText('200').first().waitFor();
      await page.goBack();
      // The API request that sent it, from its log.
      await page.getByRole('link', { name: 'The API request' }).click();
      await page.getByRole('heading', { name: 'POST /emails', level: 1 }).waitFor();
      expect(problemsBesidesThePreview(s, `${imageHost}/logo.gif`)).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('counts what was sent on the Metrics page, by domain and by mailbox provider, and fits a phone', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Metrics' }).click();
      await page.getByRole('heading', { name: 'Metrics', level: 1 }).waitFor();
      // Orders 1042 (delivered), 1043 (greylisted, then delivered) and 1044 (refused), and the probe the
      // domain's verification sent to a sandbox address (delivered without an MX). The scheduled one is not sent.
      const totals = page.getByRole('region', { name: 'Totals' });
      const stat = (label: string) =>
        totals.getByRole('term').filter({ hasText: label }).locator('xpath=following-sibling::dd[1]');
      await stat('Sent').getByText('4', { exact: true }).waitFor();
      expect(await stat('Delivered').locator('strong').textContent()).toBe('3');
      expect(await stat('Delivered').textContent()).toContain('75.00% of sent');
      expect(await stat('Bounced').locator('strong').textContent()).toBe('1');
      expect(await stat('Bounced').textContent()).toContain('25.00% of sent (line: 4%) · 1 permanent');
      expect(await stat('Delayed').locator('strong').textContent()).toBe('1');
      await totals.getByText('The bounce rate is 25.00%, at or above 4%.', { exact: false }).waitFor();
      await page.getByRole('img', { name: 'Bounce rate per period, with the 4% line' }).waitFor();

      const byDomain = page.getByRole('region', { name: 'By sending domain' });
      const domainRow = byDomain.getByRole('row', { name: new RegExp(domain.replace(/\./g, '\\.')) });
      expect(await domainRow.getByRole('cell').allTextContents()).toEqual(['4', '3', '1', '1', '0', '25.00%']);
      const byProvider = page.getByRole('region', { name: 'By mailbox provider' });
      // The file's MX is nobody's mailbox provider; the sandbox's delivery reached no MX.
      expect(
        await byProvider
          .getByRole('row', { name: /^Other/ })
          .getByRole('cell')
          .allTextContents(),
      ).toEqual(['2', '1', '1', '0', '33.33%']);
      // The per-period numbers agree with the totals.
      await page.getByText('The numbers per period').click();
      const table = page.getByRole('table', { name: 'Metrics per period' });
      const rows = await table.getByRole('row').all();
      let sentPerPeriod = 0;
      for (const row of rows.slice(1)) sentPerPeriod += Number(await row.getByRole('cell').first().textContent());
      expect(sentPerPeriod).toBe(4);
      await checkPage(s, 'metrics');

      // At a phone's width, the metrics and an email's page fit without scrolling sideways.
      await page.setViewportSize(PHONE);
      const fits = async () =>
        expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(PHONE.width);
      await page.getByRole('img', { name: 'Bounce rate per period, with the 4% line' }).waitFor();
      await fits();
      await page.goto(`/dashboard/emails/${ids.deferred}`);
      await page.getByRole('region', { name: 'Delivery attempts' }).getByRole('listitem').nth(1).waitFor();
      await fits();
      await checkPage(s, 'email-detail-phone', { waitForNetworkIdle: false });
    } finally {
      await s.close();
    }
  });

  it('reschedules and cancels a scheduled email; another team does not find it', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin, `/dashboard/emails/${ids.scheduled}`);
      await page.getByRole('heading', { name: `Reminder ${stamp}`, level: 1 }).waitFor();
      await page.getByText('Scheduled for').waitFor();
      await page.getByRole('region', { name: 'Recipients' }).getByText('pending').waitFor();
      await page.getByRole('tab', { name: 'Text' }).click();
      await page.getByRole('tabpanel').getByText('A reminder, in words.').waitFor();

      // Two days from now, at 09:30 in the reader's time zone.
      const when = new Date(Date.now() + 2 * 86_400_000);
      when.setHours(9, 30, 0, 0);
      const pad = (n: number) => String(n).padStart(2, '0');
      const local = `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}T09:30`;
      await page.getByRole('button', { name: 'Reschedule' }).click();
      const dialog = page.getByRole('dialog', { name: 'Reschedule the email' });
      await dialog.getByLabel('Send at').fill(local);
      await dialog.getByRole('button', { name: 'Reschedule' }).click();
      await dialog.waitFor({ state: 'detached' });
      await waitFor('the new time stored', async () => {
        const at = dataOf(await resend.emails.get(ids.scheduled)).scheduled_at;
        return (
          at !== null && new Date(at.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00')).getTime() === when.getTime()
        );
      });

      await page.getByRole('button', { name: 'Cancel the email' }).click();
      const confirm = page.getByRole('dialog', { name: 'Cancel the email?' });
      await confirm.getByRole('button', { name: 'Cancel the email' }).click();
      await page.getByRole('heading', { name: `Reminder ${stamp}`, level: 1 }).waitFor();
      await page.getByRole('main').getByText('canceled', { exact: true }).first().waitFor();
      expect(await page.getByRole('button', { name: 'Reschedule' }).count()).toBe(0);
      expect(dataOf(await resend.emails.get(ids.scheduled)).last_event).toBe('canceled');
      expect(problemsBesidesThePreview(s, `${imageHost}/logo.gif`)).toEqual([]);
    } finally {
      await s.close();
    }
    // Another team's person opening this team's email: not found, as the API answers.
    const other = await createTeam(system, 'Elsewhere');
    const outsider = await openBrowserSession(browser, system.apiUrl);
    try {
      await signIn(outsider.page, other.admin, `/dashboard/emails/${ids.ok}`);
      await outsider.page.getByRole('heading', { name: 'Email not found', level: 1 }).waitFor();
      expect(await outsider.page.content()).not.toContain(`Order 1042 ${stamp}`);
    } finally {
      await outsider.close();
    }
  });
});
