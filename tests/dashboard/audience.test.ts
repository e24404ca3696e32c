// The Audience pages as a person uses them: a property, a segment and a topic created; a contact added by
// hand, given a property value, put in the segment and opted out of the topic on its page, which lists the
// email sent to it; contacts found by a search, a segment, their subscription and a topic choice, kept in
// the URL; a segment renamed; each segment, topic and property counted; the contact deleted. What the page
// did is checked through the API. In Chromium.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { Resend } from 'resend';
import { dataOf, testResend, useSystem, waitFor, type SharedSystem } from '@postline/testing';
import { launchBrowser, openBrowserSession, PHONE } from '@postline/testing/browser';
import { checkPage, createTeam, signIn } from './people.ts';

jest.setTimeout(120_000);

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let resend: Resend;
const stamp = Date.now().toString(36);
// A sandbox address: the onboarding sender may write to it, so the contact's page lists a real email.
const ada = `delivered+ada${stamp}@postline.test`;
const grace = `grace.${stamp}@example.com`;

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'Audience');
  resend = testResend(team.apiKey, system.apiUrl);
  dataOf(await resend.contacts.create({ email: grace, firstName: 'Grace', lastName: 'Hopper', unsubscribed: true }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('the Audience pages', () => {
  it('creates a property, a segment and a topic, edits a contact on its page, finds contacts and deletes one', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    const audience = page.getByRole('navigation', { name: 'Audience' });
    const dialog = (name: string) => page.getByRole('dialog', { name });
    try {
      await signIn(page, team.admin);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audience' }).click();
      await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();

      // A property, a segment and a topic.
      await audience.getByRole('link', { name: 'Properties' }).click();
      await page.getByRole('button', { name: 'Create a property' }).click();
      await dialog('Create a property').getByLabel('Key').fill('plan');
      await dialog('Create a property').getByLabel('Fallback').fill('free');
      await dialog('Create a property').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('row', { name: /plan/ }).waitFor();
      await checkPage(s, 'audience-properties');

      await audience.getByRole('link', { name: 'Segments' }).click();
      await page.getByRole('button', { name: 'Create a segment' }).click();
      await dialog('Create a segment').getByLabel('Name', { exact: true }).fill('Beta');
      await dialog('Create a segment').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('button', { name: 'Rename Beta' }).click();
      await dialog('Rename Beta').getByLabel('Name', { exact: true }).fill('Beta testers');
      await dialog('Rename Beta').getByRole('button', { name: 'Rename' }).click();
      await page.getByRole('row', { name: /Beta testers/ }).waitFor();
      await checkPage(s, 'audience-segments');

      await audience.getByRole('link', { name: 'Topics' }).click();
      await page.getByRole('button', { name: 'Create a topic' }).click();
      await dialog('Create a topic').getByLabel('Name', { exact: true }).fill('Product news');
      await dialog('Create a topic').getByLabel('Description').fill('What we ship, monthly');
      await dialog('Create a topic').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('row', { name: /Product news/ }).waitFor();
      await checkPage(s, 'audience-topics');

      // A contact added by hand lands on its page.
      await audience.getByRole('link', { name: 'Contacts' }).click();
      await page.getByRole('button', { name: 'Add a contact' }).click();
      await dialog('Add a contact').getByLabel('Email').fill(ada);
      await dialog('Add a contact').getByLabel('First name').fill('Ada');
      await dialog('Add a contact').getByLabel('Last name').fill('Lovelace');
      await dialog('Add a contact').getByRole('button', { name: 'Add' }).click();
      await page.getByRole('heading', { name: ada, level: 1 }).waitFor();
      const contactId = page.url().split('/').at(-1)!;

      const details = page.getByRole('form', { name: 'Contact details' });
      await details.getByLabel('plan').fill('pro');
      await details.getByLabel('First name').fill('Augusta Ada');
      await details.getByRole('button', { name: 'Save the contact' }).click();
      await page.getByText('The contact is saved.').waitFor();
      const segments = page.getByRole('region', { name: 'Segments' });
      await segments.getByRole('combobox', { name: 'Segment', exact: true }).selectOption({ label: 'Beta testers' });
      await segments.getByRole('button', { name: 'Add', exact: true }).click();
      await segments.getByRole('button', { name: 'Remove from Beta testers' }).waitFor();
      const topics = page.getByRole('form', { name: 'Topic choices' });
      await topics.getByLabel('Product news').selectOption('opt_out');
      await topics.getByRole('button', { name: 'Save the choices' }).click();
      await page.getByText('The topic choices are saved.').waitFor();

      const contact = dataOf(await resend.contacts.get({ id: contactId }));
      expect(contact).toMatchObject({
        first_name: 'Augusta Ada',
        last_name: 'Lovelace',
        properties: { plan: { type: 'string', value: 'pro' } },
      });
      expect(dataOf(await resend.contacts.segments.list({ contactId })).data.map((x) => x.name)).toEqual([
        'Beta testers',
      ]);
      expect(dataOf(await resend.contacts.topics.list({ id: contactId })).data).toEqual([
        expect.objectContaining({ name: 'Product news', subscription: 'opt_out' }),
      ]);

      // The emails sent to the contact, each linked to its page.
      const { id: emailId } = dataOf(
        await resend.emails.send({
          from: 'onboarding@postline.test',
          to: ada,
          subject: `Welcome ${stamp}`,
          text: 'Hi',
        }),
      );
      await page.reload();
      const emails = page.getByRole('region', { name: 'Emails sent to this contact' });
      await emails.getByRole('link', { name: `Welcome ${stamp}` }).waitFor();
      // Read back as saved.
      expect(await details.getByLabel('plan').inputValue()).toBe('pro');
      expect(await emails.getByRole('link', { name: `Welcome ${stamp}` }).getAttribute('href')).toContain(emailId);
      await checkPage(s, 'audience-contact');
      await page.setViewportSize(PHONE);
      expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(PHONE.width);
      await checkPage(s, 'audience-contact-phone');
      await page.setViewportSize({ width: 1280, height: 800 });

      // Found by a search, by the segment and by the subscription; the filters stay in the URL.
      await page.getByRole('link', { name: '← Contacts' }).click();
      const filters = page.getByRole('form', { name: 'Filter the contacts' });
      const rows = page.getByRole('table', { name: 'Contacts' }).getByRole('row');
      await filters.getByLabel('Email or name').fill('LOVELACE');
      await filters.getByRole('button', { name: 'Filter' }).click();
      await waitFor('the search applied', async () => (await rows.count()) === 2);
      expect(await rows.nth(1).textContent()).toContain(ada);
      expect(new URL(page.url()).searchParams.get('q')).toBe('LOVELACE');
      await filters.getByRole('button', { name: 'Clear' }).click();
      await filters.getByLabel('Subscription').selectOption('true');
      await filters.getByRole('button', { name: 'Filter' }).click();
      await waitFor('the unsubscribed only', async () => (await rows.count()) === 2);
      expect(await rows.nth(1).textContent()).toContain(grace);
      await filters.getByRole('button', { name: 'Clear' }).click();
      await filters.getByLabel('Segment').selectOption({ label: 'Beta testers' });
      await filters.getByRole('button', { name: 'Filter' }).click();
      await waitFor('the segment only', async () => (await rows.count()) === 2);
      expect(await rows.nth(1).textContent()).toContain(ada);
      await filters.getByRole('button', { name: 'Clear' }).click();
      await filters.getByLabel('Topic').selectOption({ label: 'Product news: opted out' });
      await filters.getByRole('button', { name: 'Filter' }).click();
      await waitFor('the opted-out only', async () => (await rows.count()) === 2);
      expect(await rows.nth(1).textContent()).toContain(ada);
      expect(new URL(page.url()).searchParams.get('topic_subscription')).toBe('opt_out');
      await checkPage(s, 'audience-contacts');

      // Each segment, topic and property counts its contacts; a topic's count leads to them.
      await audience.getByRole('link', { name: 'Segments' }).click();
      const beta = page.getByRole('row', { name: /Beta testers/ });
      await waitFor('the segment counted', async () => (await beta.getByRole('cell').first().textContent()) === '1');
      await audience.getByRole('link', { name: 'Topics' }).click();
      await page.getByRole('link', { name: 'Product news: its 1 subscribed contacts' }).click();
      await waitFor('the subscribed only', async () => (await rows.count()) === 2);
      expect(await rows.nth(1).textContent()).toContain(grace);
      await page.goBack();
      await audience.getByRole('link', { name: 'Properties' }).click();
      const plan = page.getByRole('row', { name: /plan/ });
      await waitFor('the property counted', async () => (await plan.getByRole('cell').nth(2).textContent()) === '1');
      await audience.getByRole('link', { name: 'Contacts' }).click();
      await filters.getByLabel('Segment').selectOption({ label: 'Beta testers' });
      await filters.getByRole('button', { name: 'Filter' }).click();
      await waitFor('the segment only', async () => (await rows.count()) === 2);

      // Deleted from its page.
      await rows.nth(1).getByRole('link', { name: ada }).click();
      await page.getByRole('button', { name: 'Delete this contact' }).click();
      await dialog('Delete this contact?').getByRole('button', { name: 'Delete the contact' }).click();
      await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
      expect((await resend.contacts.get({ id: contactId })).error).toMatchObject({ statusCode: 404 });
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('imports a CSV into a segment with a property, mapping its columns, and shows it finish with each failure', async () => {
    const segment = dataOf(await resend.segments.create({ name: `Imported ${stamp}` })).id;
    dataOf(await resend.contactProperties.create({ key: 'city', type: 'string', fallbackValue: 'somewhere' }));
    // `Unsubscribed` would map itself by its name; the person sets it to Skip, and it is skipped.
    const csv = [
      'E-mail address,First name,City,Note,Unsubscribed',
      `alan.${stamp}@example.com,Alan,"Manchester, UK",first,true`,
      'not-an-address,Bob,Leeds,second,true',
      `edsger.${stamp}@example.com,Edsger,Austin,third,true`,
    ].join('\r\n');
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    try {
      await signIn(page, team.admin, '/dashboard/audience/imports');
      await page.getByRole('heading', { name: 'Imports', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Import a CSV' }).click();
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      const rows = page.getByRole('region', { name: "The file's first rows" });
      await rows.getByText('Manchester, UK').waitFor();
      // Named like a field or property, a column maps itself; the others are chosen.
      expect(await page.getByLabel('Column First name imports into').inputValue()).toBe('first_name');
      await waitFor(
        'the City column mapped once the properties are read',
        async () => (await page.getByLabel('Column City imports into').inputValue()) === 'property:city',
      );
      await page.getByLabel('Column E-mail address imports into').selectOption('email');
      expect(await page.getByLabel('Column Note imports into').inputValue()).toBe('');
      expect(await page.getByLabel('Column Unsubscribed imports into').inputValue()).toBe('unsubscribed');
      await page.getByLabel('Column Unsubscribed imports into').selectOption('');
      await page.getByLabel(`Imported ${stamp}`).check();
      await checkPage(s, 'audience-import-new');
      await page.getByRole('button', { name: 'Start the import' }).click();

      await page.getByRole('heading', { name: 'Import', level: 1 }).waitFor();
      await page.getByText('completed').waitFor({ timeout: 60_000 });
      const counts = page.getByRole('region', { name: 'Progress' });
      expect((await counts.textContent())?.replace(/\s+/g, ' ')).toContain('Rows3Created2Updated0Skipped0Failed1');
      const failures = page.getByRole('region', { name: 'Rows that failed' });
      expect(await failures.textContent()).toContain('Invalid `email`');
      await checkPage(s, 'audience-import');

      const imported = dataOf(await resend.contacts.list({ segmentId: segment })).data.map((c) => c.email);
      expect(imported.sort()).toEqual([`alan.${stamp}@example.com`, `edsger.${stamp}@example.com`]);
      const alan = dataOf(await resend.contacts.get({ email: `alan.${stamp}@example.com` }));
      expect(alan).toMatchObject({
        first_name: 'Alan',
        unsubscribed: false,
        properties: { city: { value: 'Manchester, UK' } },
      });
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
