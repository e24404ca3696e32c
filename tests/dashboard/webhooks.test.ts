// The Webhooks page as a developer uses it, in Chromium against a running system: an endpoint is created with
// the event picker, pointing at a local receiver that verifies every delivery with the secret revealed on
// the page; the receiver fails, and the page shows the failed attempts with their status code and response;
// one event is replayed, then every other failure since a time picked; a test event is sent; the secret is
// rotated (the next delivery carries both signatures); the endpoint is disabled, enabled again, edited and
// deleted. Emails are sent with the official resend SDK from a verified domain. Retries are not waited out:
// their scheduler timers are made due (makeTimerDue).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Kysely } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import type { Resend } from 'resend';
import { createDb } from '@postline/platform';
import {
  createVerifiedDomain,
  dataOf,
  makeTimerDue,
  nudgeUntil,
  startWebhookReceiver,
  testResend,
  useSystem,
  verifyDelivery,
  waitFor,
  type ReceivedDelivery,
  type SharedSystem,
  type WebhookReceiver,
} from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createTeam, signIn } from './people.ts';

jest.setTimeout(240_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let resend: Resend;
let domain: string;
let receiver: WebhookReceiver;
/** The system's database, for makeTimerDue. */
let db: Kysely<unknown>;
/** The receiver answers 503 while this is true; the ids (`webhook-id`) of the deliveries it failed. */
let failing = false;
const failedIds = new Set<string>();

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'Hooks page');
  resend = testResend(team.apiKey, system.apiUrl);
  db = createDb<unknown>({ url: String(system.env.DATABASE_URL), schema: 'scheduler', max: 1 }).db;
  receiver = await startWebhookReceiver();
  receiver.reply((delivery) => {
    if (!failing) return { status: 200, body: '{"ok":true}' };
    failedIds.add(delivery.headers['webhook-id'] ?? '');
    return { status: 503, body: 'receiver down for maintenance' };
  });
  domain = `hooks-${Date.now()}.example.com`;
  await createVerifiedDomain({ resend, dns: world.dns, env: system.env, name: domain });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await db?.destroy();
});

/** Sends an email with the SDK; resolves with its id. */
async function sendEmail(subject: string): Promise<string> {
  return dataOf(
    await resend.emails.send({ from: `hi@${domain}`, to: `ada@${world.rcptDomain}`, subject, text: 'Hello' }),
  ).id;
}

const sentFor = (emailId: string) => (d: ReceivedDelivery) =>
  d.json.type === 'email.sent' && d.json.data.email_id === emailId;

/** An event's delivery state, as the API answers it. */
async function eventStatus(hookId: string, eventId: string): Promise<string> {
  const r = await fetch(`${system.apiUrl}/webhooks/${hookId}/events/${eventId}`, {
    headers: { authorization: `Bearer ${team.apiKey}` },
  });
  return String(((await r.json()) as { status: string }).status);
}

/** Creates an endpoint on the Webhooks page as a person does; resolves with its id, read from the address. */
async function createEndpointInPage(page: Page): Promise<string> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'No webhook endpoints yet' }).waitFor();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
  await dialog.getByLabel('Endpoint URL').fill(receiver.url);
  // Every email event with the family's select-all, then one domain event by its name.
  await dialog.getByRole('checkbox', { name: 'All email events' }).check();
  expect(await dialog.getByRole('checkbox', { name: 'email.bounced' }).isChecked()).toBe(true);
  await dialog.getByRole('checkbox', { name: 'domain.created' }).check();
  await dialog.getByText('12 of 19 events selected.').waitFor();
  await dialog.getByRole('button', { name: 'Add endpoint' }).click();
  await page.getByRole('heading', { level: 1, name: receiver.url.replace('http://', '') }).waitFor();
  return new URL(page.url()).pathname.split('/').pop() ?? '';
}

describe('the Webhooks page', () => {
  it('creates an endpoint whose secret verifies deliveries; shows failed attempts; replays; rotates; disables', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin);
      const hookId = await createEndpointInPage(page);
      expect(hookId).toMatch(/^[0-9a-f-]{36}$/);

      // The secret is hidden until revealed; then copied.
      expect(await page.content()).not.toMatch(/whsec_[A-Za-z0-9+/=]{20,}/);
      await page.getByRole('button', { name: 'Reveal secret' }).click();
      const secret = (await page.locator('.code-value code').textContent()) ?? '';
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Copy the signing secret' }).click();
      await page.getByText('Copied').waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);

      // A delivery verifies with the revealed secret.
      const first = await sendEmail('First');
      await receiver.waitFor('email.sent of the first email', (ds) => ds.some(sentFor(first)));
      expect(verifyDelivery(receiver.deliveries.find(sentFor(first))!, secret)).toBe(true);

      await page.goto('/dashboard/webhooks');
      await page.getByRole('row', { name: /hooks/ }).getByText('and 9 more').waitFor();
      await checkPage(s, 'webhooks');

      // The receiver fails: the event goes through its whole schedule (its retry timers made due).
      failing = true;
      const failingFrom = Date.now();
      const second = await sendEmail('Second');
      // Its email.sent and email.delivered: at least two failed events.
      await receiver.waitFor('email.sent and email.delivered of the second email, failed', (ds) =>
        ['email.sent', 'email.delivered'].every((type) =>
          ds.some((d) => d.json.type === type && d.json.data.email_id === second),
        ),
      );
      const failedId = receiver.deliveries.find(sentFor(second))!.headers['webhook-id'] ?? '';
      const failed = [...failedIds];
      await nudgeUntil(
        'the failed events through their eight attempts',
        waitFor(
          'every failing event failed',
          async () => (await Promise.all(failed.map((id) => eventStatus(hookId, id)))).every((st) => st === 'failed'),
          90_000,
        ),
        () => makeTimerDue(db, ...failed.map((id) => `webhook-attempt:${id}`)),
        // Eight rounds of timer, command and attempt each: on a machine loaded by the whole suite, a minute.
        90_000,
      );
      expect(receiver.deliveries.filter((d) => d.headers['webhook-id'] === failedId)).toHaveLength(8);

      // The endpoint's page lists them under the failed filter, which the address keeps.
      await page.getByRole('link', { name: receiver.url.replace('http://', '') }).click();
      await page.getByLabel('Delivery status').selectOption('failed');
      await page.waitForURL(/status=failed/);
      const failedRow = page.getByRole('row').filter({ hasText: failedId });
      await failedRow.getByText('failed').waitFor();
      await checkPage(s, 'webhook-detail');

      // The event: its payload and its eight attempts, each with the status code and the response.
      await failedRow.getByRole('link', { name: 'email.sent' }).click();
      await page.getByRole('heading', { level: 1, name: 'email.sent' }).waitFor();
      await page.getByText(`"email_id": "${second}"`).waitFor();
      const attempts = page.getByRole('table', { name: 'Delivery attempts' }).getByRole('row');
      await waitFor('eight attempts listed', async () => (await attempts.count()) === 9);
      expect(
        await attempts.filter({ hasText: '503' }).filter({ hasText: 'receiver down for maintenance' }).count(),
      ).toBe(8);
      await checkPage(s, 'webhook-event');

      // Replayed once the receiver is back: one more delivery with the same webhook-id, verified.
      failing = false;
      const replayedAt = Date.now();
      await page.getByRole('button', { name: 'Replay event' }).click();
      await page.getByText('Replay sent').waitFor();
      await receiver.waitFor('the replay', (ds) =>
        ds.some((d) => d.at >= replayedAt && d.headers['webhook-id'] === failedId),
      );
      const replay = receiver.deliveries.find((d) => d.at >= replayedAt && d.headers['webhook-id'] === failedId)!;
      expect(verifyDelivery(replay, secret)).toBe(true);
      // Listed once refreshed, and the event it settled shows as delivered.
      await waitFor('the replay listed and the event settled', async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return (
          (await attempts.filter({ hasText: '(replay)' }).filter({ hasText: '200' }).count()) === 1 &&
          (await page.getByText('success', { exact: true }).count()) === 1
        );
      });
      expect(await eventStatus(hookId, failedId)).toBe('success');
      await page.waitForLoadState('networkidle');

      // Every other failure since a time picked (in the browser's time zone) is delivered again.
      const rest = failed.filter((id) => id !== failedId);
      const recoveredAt = Date.now();
      await page.getByRole('link', { name: /← / }).click();
      const since = await page.evaluate((at) => {
        const d = new Date(at - 60_000);
        const pad = (n: number) => String(n).padStart(2, '0');
        return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
      }, failingFrom);
      await page.getByLabel('Failed since').fill(since);
      await page.getByRole('button', { name: 'Replay failed events' }).click();
      await page.getByText(`${rest.length} failed event${rest.length === 1 ? '' : 's'} delivered again.`).waitFor();
      await receiver.waitFor('every other failure delivered again', (ds) =>
        rest.every((id) => ds.some((d) => d.at >= recoveredAt && d.headers['webhook-id'] === id)),
      );
      await page.getByLabel('Delivery status').selectOption('failed');
      await waitFor('no failed event left', async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return (await page.getByRole('heading', { name: 'No failed events' }).count()) === 1;
      });
      await page.waitForLoadState('networkidle');

      // A test event of the type picked, delivered signed; its page is one click away.
      await page.getByLabel('Event type').selectOption('email.bounced');
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.getByRole('link', { name: 'see its delivery' }).click();
      await page.getByRole('heading', { level: 1, name: 'email.bounced' }).waitFor();
      await receiver.waitFor('the test event', (ds) => ds.some((d) => d.json.type === 'email.bounced'));
      expect(verifyDelivery(receiver.deliveries.find((d) => d.json.type === 'email.bounced')!, secret)).toBe(true);

      // Rotated: the page says until when the previous secret signs; the next delivery carries both.
      await page.getByRole('link', { name: /← / }).click();
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await page
        .getByRole('dialog', { name: 'Rotate the signing secret?' })
        .getByRole('button', { name: 'Rotate secret' })
        .click();
      await page.getByText('each delivery is signed twice').waitFor();
      const rotated = (await page.locator('.code-value code').textContent()) ?? '';
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      const third = await sendEmail('Third');
      await receiver.waitFor('email.sent of the third email', (ds) => ds.some(sentFor(third)));
      const signed = receiver.deliveries.find(sentFor(third))!;
      expect(signed.headers['webhook-signature']?.split(' ').filter((sig) => sig.startsWith('v1,'))).toHaveLength(2);
      expect(verifyDelivery(signed, rotated)).toBe(true);
      expect(verifyDelivery(signed, secret)).toBe(true);

      // Disabled: a banner with the reason and the way back.
      await page.getByRole('button', { name: 'Disable endpoint' }).click();
      const banner = page.getByRole('alert').filter({ hasText: 'This endpoint is disabled' });
      await banner.getByText('disabled through the API').waitFor();
      await banner.getByRole('button', { name: 'Enable endpoint' }).click();
      await banner.waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Disable endpoint' }).waitFor();

      // Edited: the picker starts from the endpoint's events.
      await page.getByRole('button', { name: 'Edit endpoint' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit the endpoint' });
      expect(await edit.getByRole('checkbox', { name: 'domain.created' }).isChecked()).toBe(true);
      await edit.getByRole('checkbox', { name: 'All events', exact: true }).check();
      await edit.getByText('19 of 19 events selected.').waitFor();
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'hidden' });
      await page.getByRole('listitem').filter({ hasText: 'suppression.removed' }).waitFor();

      // Deleted after confirming: the list is empty again.
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      await page
        .getByRole('dialog', { name: 'Delete this endpoint?' })
        .getByRole('button', { name: 'Delete endpoint' })
        .click();
      await page.getByRole('heading', { name: 'No webhook endpoints yet' }).waitFor();

      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('shows an unknown endpoint and a refused URL by the API’s message, and fits a phone’s width', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      // Signed in at laptop width (signIn waits for the navigation, folded behind Menu on a phone), then narrowed.
      await signIn(page, team.admin, '/dashboard/webhooks/00000000-0000-7000-8000-000000000000');
      await page.setViewportSize(PHONE);
      await page.getByRole('alert').getByText('Webhook not found').waitFor();
      await page.getByRole('link', { name: '← Webhooks' }).click();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
      await dialog.getByLabel('Endpoint URL').fill('https://user:pw@hooks.example.com/x');
      await dialog.getByRole('checkbox', { name: 'email.sent' }).check();
      await dialog.getByRole('button', { name: 'Add endpoint' }).click();
      await dialog.getByRole('alert').waitFor();
      expect(await dialog.getByRole('alert').textContent()).toContain('validation_error');
      await checkPage(s, 'webhooks-create-phone');

      // Fixed, it is created; its page fits the phone's width.
      await dialog.getByLabel('Endpoint URL').fill('https://hooks.example.com/phone');
      await dialog.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('heading', { level: 1, name: 'hooks.example.com/phone' }).waitFor();
      await page.getByRole('heading', { name: 'No events yet' }).waitFor();
      expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(PHONE.width);
      await checkPage(s, 'webhook-detail-phone');
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      await page
        .getByRole('dialog', { name: 'Delete this endpoint?' })
        .getByRole('button', { name: 'Delete endpoint' })
        .click();
      await page.getByRole('heading', { name: 'No webhook endpoints yet' }).waitFor();
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
