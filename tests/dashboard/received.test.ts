// The Received pages as a person uses them: a message sent by another MTA (nodemailer) to the real MX at the
// team's receiving domain, with an inline image and a PDF attached, is listed and opened: its verdicts, its
// attachment downloaded, the whole message downloaded, its headers, and a sandboxed preview in which its
// script does not run and its remote image is fetched only when asked. In Chromium, against a running system.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import nodemailer from 'nodemailer';
import type { Browser } from 'playwright-core';
import {
  createReceivingDomain,
  observeBroker,
  testResend,
  useSystem,
  waitFor,
  type SharedSystem,
} from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createTeam, PIXEL, problemsBesidesThePreview, signIn, startImageHost } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
/** A stand-in for the sender's image host: asked only once the reader wants remote images. */
let images: Awaited<ReturnType<typeof startImageHost>>;
/** The message's remote image, on a server of the test's own. */
let remoteImage: string;
const subject = `Invoice question ${Date.now()}`;
const PDF = Buffer.from('%PDF-1.4\n% a tiny document\n%%EOF\n');

beforeAll(async () => {
  ({ system } = world);
  images = await startImageHost();
  const remote = `${images.origin}/track.gif`;
  remoteImage = remote;
  browser = await launchBrowser();
  team = await createTeam(system, 'Support desk');
  const resend = testResend(team.apiKey, system.apiUrl);
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  let domain: string;
  try {
    domain = (
      await createReceivingDomain({
        resend,
        dns: world.dns,
        events,
        name: `desk${Date.now().toString(36)}.example.com`,
        mxPort: system.smtp.mx,
      })
    ).name;
  } finally {
    await events.close();
  }
  const mx = nodemailer.createTransport({
    host: '127.0.0.1',
    port: system.smtp.mx,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    name: 'mta.customer.test',
  });
  await mx.sendMail({
    envelope: { from: 'carol@customer.test', to: [`help@${domain}`] },
    from: 'Carol Customer <carol@customer.test>',
    to: `Help <help@${domain}>`,
    subject,
    text: 'Why was I charged twice?',
    html: `<h1>Why was I charged twice?</h1><img src="cid:logo@customer.test" alt="Customer logo"><img src="${remote}" alt="tracker"><script>document.title='ran'</script>`,
    attachments: [
      { filename: 'statement.pdf', content: PDF, contentType: 'application/pdf' },
      { filename: 'logo.gif', content: PIXEL, contentType: 'image/gif', cid: 'logo@customer.test' },
    ],
  });
  await waitFor('the message received', async () => {
    const r = await fetch(`${system.apiUrl}/emails/receiving`, { headers: { authorization: `Bearer ${team.apiKey}` } });
    return ((await r.json()) as { data: { subject: string }[] }).data.some((e) => e.subject === subject);
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await images?.close();
});

describe('the Received pages', () => {
  it('lists a received message and shows its verdicts, attachments, headers and a sandboxed preview', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Received' }).click();
      await page.getByRole('heading', { name: 'Received', level: 1 }).waitFor();
      const row = page.getByRole('row', { name: new RegExp(subject) });
      expect(await row.textContent()).toContain('carol@customer.test');
      await checkPage(s, 'received');
      await row.getByRole('link', { name: subject }).click();
      await page.getByRole('heading', { name: subject, level: 1 }).waitFor();

      // Authentication: customer.test publishes no SPF, DKIM or DMARC, so none passes.
      const auth = page.getByRole('region', { name: 'Authentication' });
      await auth.getByText('SPF').waitFor();
      expect(await auth.textContent()).not.toMatch(/pass/);

      // The attachment and the whole message, downloaded as a person saves them.
      const attachments = page.getByRole('region', { name: 'Attachments' });
      const pdf = page.waitForEvent('download');
      await attachments.getByRole('link', { name: 'statement.pdf' }).click();
      expect((await pdf).suggestedFilename()).toBe('statement.pdf');
      const eml = page.waitForEvent('download');
      await page.getByRole('link', { name: 'Download the message (.eml)' }).click();
      const raw = await eml;
      const bytes = await new Promise<string>((resolve, reject) => {
        let text = '';
        void raw.createReadStream().then((stream) => {
          stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
          stream.on('end', () => resolve(text));
          stream.on('error', reject);
        });
      });
      expect(bytes).toContain(`Subject: ${subject}`);

      // Headers as they came.
      const headers = page.getByRole('region', { name: 'Headers' });
      await headers.getByRole('rowheader', { name: 'subject' }).waitFor();

      // The preview: sandboxed (its script does not run), the inline image shown, the remote one not fetched
      // until asked.
      const preview = page.getByTitle('Preview of the received email').contentFrame();
      await preview.getByRole('heading', { name: 'Why was I charged twice?' }).waitFor();
      await preview.getByRole('img', { name: 'Customer logo' }).waitFor();
      await checkPage(s, 'received-detail', { waitForNetworkIdle: false });
      expect(images.requests()).toBe(0);
      await page.getByRole('button', { name: 'Show remote images' }).click();
      await waitFor('the remote image to be fetched', () => images.requests() > 0);
      await preview.getByRole('img', { name: 'tracker' }).waitFor();
      expect(await preview.locator('html').evaluate('document.title')).not.toBe('ran');
      await page.getByRole('tab', { name: 'Text' }).click();
      await page.getByRole('tabpanel').getByText('Why was I charged twice?').waitFor();
      // At a phone's width the page fits without scrolling sideways.
      await page.setViewportSize(PHONE);
      await page.getByRole('region', { name: 'Headers' }).waitFor();
      expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(PHONE.width);
      await checkPage(s, 'received-detail-phone', { waitForNetworkIdle: false });
      expect(problemsBesidesThePreview(s, remoteImage)).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
