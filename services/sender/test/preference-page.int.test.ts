// The preference page in a real browser (Debian's Chromium, driven by playwright-core) through the real
// gateway: it lists the public topic and the private topic the contact is opted in to, hides the private
// topic it is not, and its form (no JavaScript involved) opts out of one topic, shows the confirmation and
// the choice is what the API reads back afterwards.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import type { Resend } from 'resend';
import { dataOf, testResend, useSystem, type SharedSystem } from '@postline/testing';
import { createUnsubscribeSigner, unsubscribeUrl } from '../src/engagement/domain/unsubscribe-links.ts';

jest.setTimeout(60_000);

const SECRET_KEY = 'e2e-secret-key-not-for-production';

let system: SharedSystem;
let browser: Browser;
let teamId: string;
let apiKey: string;
let resend: Resend;

const world = useSystem();

beforeAll(async () => {
  ({ system } = world);
  const team = await system.admin('team', 'create', '--name', 'Preferences');
  teamId = String(team.team_id);
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  // npm test finds or installs a Chromium and names it in CHROMIUM_PATH.
  const executablePath = process.env.CHROMIUM_PATH ?? execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();
  browser = await chromium.launch({
    executablePath,
    headless: true,
    // Chromium's sandbox cannot run as root (CI containers).
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
}, 30_000);

async function createTopic(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${system.apiUrl}/topics`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

it('lists the topics the contact may see, and opts out of one through the form', async () => {
  const news = await createTopic({
    name: 'Product news',
    description: 'What we ship, monthly.',
    default_subscription: 'opt_in',
    visibility: 'public',
  });
  const beta = await createTopic({ name: 'Beta programme', default_subscription: 'opt_out', visibility: 'private' });
  const staff = await createTopic({ name: 'Staff notes', default_subscription: 'opt_out', visibility: 'private' });
  const contact = dataOf(await resend.contacts.create({ email: 'ada.lovelace@example.com' }));
  dataOf(await resend.contacts.topics.update({ id: contact.id, topics: [{ id: beta, subscription: 'opt_in' }] }));
  const url = unsubscribeUrl(
    system.apiUrl,
    createUnsubscribeSigner(SECRET_KEY).sign({ teamId, contactId: contact.id, broadcastId: randomUUID() }),
  );

  const page = await browser.newPage({ javaScriptEnabled: false });
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  expect((await page.goto(url))?.status()).toBe(200);
  expect(await page.title()).toBe('Email preferences');
  expect(await page.getAttribute('html', 'lang')).toBe('en');
  await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Email preferences');
  expect(await page.textContent('main')).toContain('ad•••@example.com');

  const newsGroup = page.getByRole('group', { name: 'Product news' });
  expect(await newsGroup.isVisible()).toBe(true);
  expect(await newsGroup.getByRole('radio', { name: 'Subscribed', exact: true }).isChecked()).toBe(true);
  expect(await page.getByRole('group', { name: 'Beta programme' }).isVisible()).toBe(true);
  expect(await page.getByRole('group', { name: 'Staff notes' }).count()).toBe(0);
  expect(await page.content()).not.toContain(staff);
  expect(await page.getByRole('checkbox', { name: 'Unsubscribe from all marketing emails' }).isChecked()).toBe(false);

  await newsGroup.getByRole('radio', { name: 'Unsubscribed', exact: true }).check();
  await page.getByRole('button', { name: 'Save preferences' }).click();
  await page.getByRole('status').waitFor();
  expect(page.url()).toBe(url);
  expect(await page.getByRole('status').textContent()).toBe('Your preferences have been saved.');
  expect(
    await page
      .getByRole('group', { name: 'Product news' })
      .getByRole('radio', { name: 'Unsubscribed', exact: true })
      .isChecked(),
  ).toBe(true);
  // The CSP allows the page everything it uses: nothing was refused.
  expect(consoleErrors).toEqual([]);

  const topics = dataOf(await resend.contacts.topics.list({ id: contact.id })).data;
  expect(Object.fromEntries(topics.map((topic) => [topic.id, topic.subscription]))).toEqual({
    [news]: 'opt_out',
    [beta]: 'opt_in',
    [staff]: 'opt_out',
  });
  expect(dataOf(await resend.contacts.get({ id: contact.id })).unsubscribed).toBe(false);
  await page.close();
});
