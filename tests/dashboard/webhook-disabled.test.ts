// A webhook endpoint that stops working, as the team sees it in Chromium against a running system: every
// delivery to a local receiver fails until its failures disable the endpoint (POSTLINE_DELAY_SCALE shrinks
// the 5-day window to ~8.6 s, so the failures are real, not moved in the database); emails sent meanwhile
// are recorded for it as failed, with no attempt; a banner on every page names the endpoint, why and since
// when; the admin enables it and replays its failures from the banner, and the receiver, verifying every
// delivery with the endpoint's secret, gets the events of the whole outage. Emails are sent with the
// official resend SDK from a verified domain.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  dataOf,
  startWebhookReceiver,
  testResend,
  useSystem,
  verifyDelivery,
  waitFor,
  type ReceivedDelivery,
  type SharedSystem,
  type WebhookReceiver,
} from '@postline/testing';
import { launchBrowser, openBrowserSession } from '@postline/testing/browser';
import { checkPage, createTeam, signIn } from './people.ts';

jest.setTimeout(240_000);

const world = useSystem({ env: { POSTLINE_DELAY_SCALE: '0.00002' } });
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let resend: Resend;
let domain: string;
let receiver: WebhookReceiver;
/** The receiver answers 503 while this is true. */
let failing = true;

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'Broken hooks');
  resend = testResend(team.apiKey, system.apiUrl);
  receiver = await startWebhookReceiver();
  receiver.reply(() => (failing ? { status: 503, body: 'receiver down' } : { status: 200, body: '{"ok":true}' }));
  domain = `outage-${Date.now()}.example.com`;
  await createVerifiedDomain({ resend, dns: world.dns, env: system.env, name: domain });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
});

async function sendEmail(subject: string): Promise<string> {
  return dataOf(
    await resend.emails.send({ from: `hi@${domain}`, to: `ada@${world.rcptDomain}`, subject, text: 'Hello' }),
  ).id;
}

async function api(path: string): Promise<Record<string, unknown> & { data?: Record<string, unknown>[] }> {
  const r = await fetch(`${system.apiUrl}${path}`, { headers: { authorization: `Bearer ${team.apiKey}` } });
  if (!r.ok) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, unknown>;
}

const sentFor = (emailId: string) => (d: ReceivedDelivery) =>
  d.json.type === 'email.sent' && d.json.data.email_id === emailId;

describe('a webhook endpoint disabled by its failures', () => {
  it('shows a banner on every page, and enabling it from there replays the events of the outage', async () => {
    const hook = dataOf(await resend.webhooks.create({ endpoint: receiver.url, events: ['email.sent'] }));
    const status = async () => String((await api(`/webhooks/${hook.id}`)).status);

    // Every delivery fails. One email after another, each through its whole (scaled, ~2 s) retry schedule,
    // keeps failures coming until the (scaled) 5 days are over and a failure disables the endpoint.
    for (let n = 1; (await status()) === 'enabled'; n++) {
      expect(n).toBeLessThan(30);
      const id = await sendEmail(`Failing ${n}`);
      await waitFor(
        'its eight attempts, or the endpoint disabled',
        async () => receiver.deliveries.filter(sentFor(id)).length === 8 || (await status()) === 'disabled',
        30_000,
      );
    }

    // Emails sent while it is disabled: their events are recorded failed, and nothing is sent to it.
    const deliveredBefore = receiver.deliveries.length;
    const outage = [await sendEmail('During the outage 1'), await sendEmail('During the outage 2')];
    await waitFor('the outage events recorded', async () => {
      const events = (await api(`/webhooks/${hook.id}/events?limit=10`)).data ?? [];
      return events.filter((e) => e.failure_reason === 'endpoint_disabled' && e.status === 'failed').length >= 2;
    });
    expect(receiver.deliveries.filter((d) => outage.some((id) => sentFor(id)(d)))).toEqual([]);
    expect(receiver.deliveries.length).toBe(deliveredBefore);

    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin);
      const short = receiver.url.replace('http://', '');
      // The dashboard's first page and the Webhooks page both show the banner.
      const banner = page.getByRole('alert').filter({ hasText: `Webhook endpoint ${short} is disabled` });
      await banner.getByText('every delivery failed for 5 days').waitFor();
      await banner.getByText('failing since').waitFor();
      await checkPage(s, 'webhook-disabled-banner');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await banner.waitFor();
      await banner.getByRole('link', { name: short }).click();
      await page.getByRole('heading', { level: 1, name: short }).waitFor();
      // On the endpoint's own page the banner is the only notice of it (no second one); the events of the
      // outage are listed failed, their endpoint disabled (so is one whose retries the disable cut short).
      expect(await page.getByRole('alert').filter({ hasText: 'is disabled' }).count()).toBe(1);
      await waitFor(
        'the outage events listed',
        async () => (await page.getByRole('row').filter({ hasText: 'endpoint disabled' }).count()) >= 2,
      );

      // The receiver is back: the admin enables the endpoint and replays its failures from the banner.
      failing = false;
      await banner.getByRole('button', { name: `Enable and replay failed events: ${short}` }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `${short} is enabled again` })
        .waitFor();
      await waitFor('the banner gone', async () => (await banner.count()) === 0);
      await checkPage(s, 'webhook-disabled-recovered');
      expect(await status()).toBe('enabled');

      // Every email of the outage arrives, signed with the endpoint's secret.
      await receiver.waitFor('the outage events recovered', (ds) => outage.every((id) => ds.some(sentFor(id))));
      for (const id of outage) {
        const delivery = receiver.deliveries.find(sentFor(id))!;
        expect(verifyDelivery(delivery, hook.signing_secret)).toBe(true);
      }
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
