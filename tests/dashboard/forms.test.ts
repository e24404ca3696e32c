// Signup forms as a person uses them: a form created on the dashboard with a segment and a topic of the
// team's, its hosted page opened from the form's page, filled in and submitted; the confirmation email
// arrives at the recipients' MX (a local sink), its link is followed and its button pressed, and the person
// is then a contact in the segment, counted as confirmed on the form's page. The dashboard page and the
// hosted page pass axe. In Chromium.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  dataOf,
  mimePartOf,
  testResend,
  uniqueDomain,
  useSystem,
  waitFor,
  type SharedSystem,
} from '@postline/testing';
import { launchBrowser, openBrowserSession } from '@postline/testing/browser';
import { MIN_FILL_MS } from '../../services/sender/src/forms/domain/signup-rules.ts';
import { createFormTokens } from '../../services/sender/src/forms/index.ts';
import { checkPage, createTeam, signIn } from './people.ts';

jest.setTimeout(150_000);

const RCPT = uniqueDomain('signup');
const world = useSystem({ rcptDomain: RCPT });
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let resend: Resend;
let domain: string;
const stamp = Date.now().toString(36);
const ada = `ada.${stamp}@${RCPT}`;

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'Forms');
  resend = testResend(team.apiKey, system.apiUrl);
  domain = (await createVerifiedDomain({ resend, dns: world.dns, env: system.env, name: `news${stamp}.example.com` }))
    .name;
  dataOf(await resend.segments.create({ name: 'Newsletter' }));
  dataOf(await resend.topics.create({ name: 'Product news', defaultSubscription: 'opt_out' }));
}, 150_000);

afterAll(async () => {
  await browser?.close();
});

describe('signup forms', () => {
  it('creates a form, signs up on its hosted page, confirms by email, and finds the contact in the segment', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin, '/dashboard/audience');
      await page.getByRole('navigation', { name: 'Audience' }).getByRole('link', { name: 'Forms' }).click();
      await page.getByRole('heading', { name: 'Signup forms', level: 1 }).waitFor();
      await page.getByText('No signup forms yet').waitFor();
      await page.getByRole('link', { name: 'Create a form' }).click();

      const settings = page.getByRole('form', { name: 'New form' });
      await settings.getByLabel('Name', { exact: true }).fill('Acme newsletter');
      await settings.getByRole('group', { name: 'Add people to these segments' }).getByLabel('Newsletter').check();
      await settings
        .getByRole('group', { name: 'Subscribe people to these topics' })
        .getByLabel('Product news')
        .check();
      await settings.getByLabel('Confirmation email from').fill(`Acme News <news@${domain}>`);
      await settings.getByRole('button', { name: 'Create the form' }).click();
      await page.getByRole('heading', { name: 'Acme newsletter', level: 1 }).waitFor();
      const formId = page.url().split('/').at(-1)!;
      await page.getByRole('button', { name: 'Copy the snippet' }).click();
      await page.getByText('Copied').waitFor();
      const snippet = await page.evaluate('navigator.clipboard.readText()');
      expect(snippet).toContain('<form action="');
      expect(snippet).toContain('name="website"');
      await checkPage(s, 'audience-form');
      const hostedUrl = (await page.getByRole('link', { name: 'Open the form' }).getAttribute('href'))!;
      expect(snippet).toContain(hostedUrl);

      // The hosted page, as a visitor sees it.
      await page.goto(hostedUrl);
      await page.getByRole('heading', { name: 'Acme newsletter', level: 1 }).waitFor();
      await checkPage(s, 'signup-form');
      await page.getByLabel('Email').fill(ada);
      await page.getByLabel('First name (optional)').fill('Ada');
      // The bot trap takes a submit sooner than a person could type as a bot's. A test types in
      // milliseconds, so the page's render token (a hidden field) says it was shown a person's while ago.
      const shownEarlier = createFormTokens(String(system.env.POSTLINE_SECRET_KEY)).render({
        formId,
        renderedAt: new Date(Date.now() - 2 * MIN_FILL_MS),
      });
      await page.locator('input[type="hidden"][name="rendered"]').evaluate((input, value) => {
        (input as unknown as { value: string }).value = value;
      }, shownEarlier);
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await page.getByText('Almost done: we sent you an email.').waitFor();
      expect((await resend.contacts.get({ email: ada })).data).toBeNull();

      // The confirmation email's link, and its button.
      await waitFor('the confirmation email', () => world.sink.messages.some((m) => m.to.includes(ada)), 30_000);
      const email = world.sink.messages.find((m) => m.to.includes(ada))!;
      const link = /https?:\/\/\S+\/confirm\/\S+/.exec(mimePartOf(email.raw, 'text/plain') ?? '')![0];
      await page.goto(link);
      await page.getByRole('button', { name: 'Confirm my subscription' }).click();
      await page.getByRole('heading', { name: 'Subscription confirmed', level: 1 }).waitFor();
      await checkPage(s, 'signup-form-confirmed');

      // A contact, in the segment.
      await page.goto('/dashboard/audience');
      await page.getByRole('table', { name: 'Contacts' }).getByRole('link', { name: ada }).click();
      await page.getByRole('heading', { name: ada, level: 1 }).waitFor();
      await page
        .getByRole('region', { name: 'Segments' })
        .getByRole('button', { name: 'Remove from Newsletter' })
        .waitFor();

      // Counted on the form's page.
      await page.goto('/dashboard/audience/forms');
      const row = page.getByRole('table', { name: 'Signup forms' }).getByRole('row', { name: /Acme newsletter/ });
      await row.getByRole('link', { name: 'Acme newsletter' }).click();
      const counts = page.getByRole('definition').filter({ hasText: /^\d+$/ });
      await waitFor('the confirmed signup counted', async () => (await counts.allTextContents()).join(',') === '1,0,1');
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
