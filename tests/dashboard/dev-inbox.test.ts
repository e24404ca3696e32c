// The Dev inbox as a person uses it, on a system whose operator turned DEV_INBOX on: the banner on every
// page, two emails sent through the API from a domain only added (never verified) to real-world addresses,
// kept instead of sent; found by a search kept in the URL, opened beside the list: a sandboxed preview whose
// script does not run and whose remote image is fetched only when asked, the header fields with the DKIM
// signature, the raw source, the .eml download, what the events said; then deleted. In Chromium.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { dataOf, testResend, useSystem, waitFor, type SharedSystem } from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createTeam, problemsBesidesThePreview, signIn, startImageHost } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem({ env: { DEV_INBOX: 'true' } });
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let images: Awaited<ReturnType<typeof startImageHost>>;
let remoteImage: string;
const stamp = Date.now().toString(36);
const shipped = `Your order shipped ${stamp}`;
const reset = `Reset your password ${stamp}`;

beforeAll(async () => {
  ({ system } = world);
  images = await startImageHost();
  remoteImage = `${images.origin}/open.gif`;
  browser = await launchBrowser();
  team = await createTeam(system, 'Staging shop');
  const resend = testResend(team.apiKey, system.apiUrl);
  const domain = `shop-${stamp}.example.com`;
  dataOf(await resend.domains.create({ name: domain }));
  const send = async (subject: string, html: string, to: string[]) => {
    let id = '';
    // The sender learns of the added domain from its event: until then the send is refused.
    await waitFor('the email accepted', async () => {
      const { data } = await resend.emails.send({
        from: `Shop <orders@${domain}>`,
        to,
        subject,
        html,
        text: subject,
        attachments: [{ filename: 'invoice.txt', content: Buffer.from('total: 42') }],
      });
      id = data?.id ?? '';
      return id !== '';
    });
    return id;
  };
  const ids = [
    await send(
      shipped,
      `<h1>On its way</h1><img src="${remoteImage}" alt="tracker"><script>document.title='ran'</script>`,
      ['ann@gmail.com'],
    ),
    await send(reset, '<p>Use the link to choose a new password.</p>', ['bob@outlook.com']),
  ];
  await waitFor('both kept', async () => {
    const r = await fetch(`${system.apiUrl}/dev-inbox/messages`, {
      headers: { authorization: `Bearer ${team.apiKey}` },
    });
    const kept = ((await r.json()) as { data: { email_id: string }[] }).data.map((m) => m.email_id);
    return ids.every((id) => kept.includes(id));
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await images?.close();
});

describe('the Dev inbox', () => {
  it('shows it is on everywhere, finds a kept message, opens it like a mail client and deletes it', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin);
      // The banner on the first page shown, before the inbox is opened.
      const banner = page.getByRole('status').filter({ hasText: 'Development inbox on' });
      await banner.waitFor();
      expect(await banner.textContent()).toContain('No email leaves this install');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dev inbox' }).click();
      await page.getByRole('heading', { name: 'Dev inbox', level: 1 }).waitFor();
      const list = page.getByRole('list', { name: 'Kept messages' });
      await list.getByRole('link', { name: new RegExp(reset) }).waitFor();
      expect(await list.getByRole('listitem').count()).toBe(2);
      await checkPage(s, 'dev-inbox');

      // A search, kept in the URL.
      await page.getByLabel('Subject, sender or recipient').fill('order shipped');
      await page.getByRole('button', { name: 'Filter' }).click();
      await waitFor('the search applied', async () => (await list.getByRole('listitem').count()) === 1);
      expect(new URL(page.url()).searchParams.get('q')).toBe('order shipped');
      await list.getByRole('link', { name: new RegExp(shipped) }).click();
      await page.getByRole('heading', { name: shipped, level: 2 }).waitFor();
      const message = page.getByRole('article', { name: shipped });
      expect(await message.textContent()).toContain('ann@gmail.com');
      expect(await message.getByText('invoice.txt').count()).toBe(1);

      // The preview: sandboxed, its remote image only when asked.
      const preview = page.getByTitle('Preview of the email').contentFrame();
      await preview.getByRole('heading', { name: 'On its way' }).waitFor();
      expect(images.requests()).toBe(0);
      await checkPage(s, 'dev-inbox-message', { waitForNetworkIdle: false });
      await page.getByRole('button', { name: 'Show remote images' }).click();
      await waitFor('the remote image to be fetched', () => images.requests() > 0);
      expect(await preview.locator('html').evaluate('document.title')).not.toBe('ran');

      // Header fields as sent, signed with the added domain's key.
      await page.getByRole('tab', { name: 'Headers' }).click();
      const fields = page.getByRole('region', { name: 'Header fields' });
      const signature = fields.getByRole('row', { name: /DKIM-Signature/ });
      expect(await signature.textContent()).toContain(`d=shop-${stamp}.example.com`);
      await page.getByRole('tab', { name: 'Raw' }).click();
      await page.getByRole('tabpanel').getByText(`Subject: ${shipped}`, { exact: false }).waitFor();
      const eml = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Download the message (.eml)' }).click();
      expect((await eml).suggestedFilename()).toMatch(/\.eml$/);

      // What the events said.
      const timeline = page.getByRole('region', { name: 'Timeline' });
      await timeline.getByText('delivered').waitFor();

      // At a phone's width the list and the message stack, and nothing scrolls sideways.
      await page.setViewportSize(PHONE);
      expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(PHONE.width);
      await checkPage(s, 'dev-inbox-phone', { waitForNetworkIdle: false });
      await page.setViewportSize({ width: 1280, height: 800 });

      await page.getByRole('button', { name: 'Delete this message' }).click();
      await page
        .getByRole('dialog', { name: 'Delete this message?' })
        .getByRole('button', { name: 'Delete the message' })
        .click();
      await page.getByText('No message matches').waitFor();
      expect(problemsBesidesThePreview(s, remoteImage)).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
