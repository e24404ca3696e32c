// The Templates pages as a marketer uses them: a template created, its HTML written in the code editor with a
// variable and a fallback, previewed with a sample value (then the fallback once the sample is cleared), saved,
// published, edited again into a new draft; the history shows both versions with their author; the first is
// reverted to a new draft; a test is sent to oneself and arrives in the Dev inbox; the list duplicates and
// deletes. What the pages did is checked through the API. In Chromium.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { Resend } from 'resend';
import { dataOf, testResend, useSystem, waitFor, type SharedSystem } from '@postline/testing';
import { LAPTOP, launchBrowser, openBrowserSession } from '@postline/testing/browser';
import { checkPage, createTeam, signIn } from './people.ts';

jest.setTimeout(180_000);

const DOCS_SCREENSHOT = join(import.meta.dirname, '..', '..', 'docs', 'screenshots', 'template-editor.png');

const world = useSystem();
let system: SharedSystem;
let browser: Browser;
let team: Awaited<ReturnType<typeof createTeam>>;
let resend: Resend;
const stamp = Date.now().toString(36);
const name = `Welcome ${stamp}`;
// Its style sheet, as most email HTML carries one: the preview applies it.
const firstHtml = '<style>h1 { color: rgb(170, 0, 51) }</style>\n<h1>Hello {{{NAME}}}</h1>\n<p>Thanks for joining.</p>';
const secondHtml = '<h1>Welcome aboard, {{{NAME}}}</h1>\n<p>Thanks for joining.</p>';

beforeAll(async () => {
  ({ system } = world);
  browser = await launchBrowser();
  team = await createTeam(system, 'Templates');
  resend = testResend(team.apiKey, system.apiUrl);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('the Templates pages', () => {
  it('writes, previews, saves, publishes and edits a template, reverts a version and sends a test', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    const dialog = (title: string) => page.getByRole('dialog', { name: title });
    const preview = page.getByTitle('Preview', { exact: true }).contentFrame();
    const html = page.getByRole('textbox', { name: 'HTML' });
    try {
      await signIn(page, team.admin);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Templates' }).click();
      await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
      await page.getByText('No templates yet').waitFor();

      // Created, then opened in the editor.
      await page.getByRole('button', { name: 'Create a template' }).click();
      await dialog('Create a template').getByLabel('Name').fill(name);
      await dialog('Create a template').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('heading', { name, level: 1 }).waitFor();
      const id = page.url().split('/').at(-1)!;

      // HTML with a variable, its fallback and a sample value: the preview shows the sample, then the fallback.
      await html.fill(firstHtml);
      await page.getByLabel('Subject').fill('Welcome, {{{NAME}}}');
      await page.getByRole('button', { name: 'Add a variable' }).click();
      await page.getByLabel('Key of variable 1').fill('NAME');
      await page.getByLabel('Fallback of NAME').fill('friend');
      await page.getByLabel('Sample value of NAME').fill('Ada');
      await preview.getByRole('heading', { name: 'Hello Ada' }).waitFor();
      await page.getByText('Subject: Welcome, Ada').waitFor();
      await waitFor('the style sheet applied', async () => {
        const color = await preview
          .getByRole('heading', { name: 'Hello Ada' })
          .evaluate(
            (heading) =>
              (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(heading)
                .color,
          );
        return color === 'rgb(170, 0, 51)';
      });
      await page.getByLabel('Sample value of NAME').fill('');
      await preview.getByRole('heading', { name: 'Hello friend' }).waitFor();
      await page.getByLabel('Sample value of NAME').fill('Ada');
      await preview.getByRole('heading', { name: 'Hello Ada' }).waitFor();

      // Leaving with unsaved changes asks first.
      await page.getByText('unsaved changes').waitFor();
      await page.getByRole('link', { name: '← Templates' }).click();
      await dialog('Leave without saving?').getByRole('button', { name: 'Stay on the page' }).click();
      await page.getByRole('heading', { name, level: 1 }).waitFor();

      await page.getByRole('button', { name: 'Save draft' }).click();
      await page.getByText('The draft is saved.').waitFor();
      const draft = dataOf(await resend.templates.get(id));
      expect(draft).toMatchObject({ html: firstHtml, subject: 'Welcome, {{{NAME}}}', status: 'draft' });
      expect(draft.variables).toEqual([
        expect.objectContaining({ key: 'NAME', type: 'string', fallback_value: 'friend' }),
      ]);

      await page.getByRole('button', { name: 'Publish' }).click();
      await page.getByText('Published: sends with this template now use this version.').waitFor();
      expect(dataOf(await resend.templates.get(id)).status).toBe('published');

      // Edited again: a new draft beside the published version.
      await html.fill(secondHtml);
      await preview.getByRole('heading', { name: 'Welcome aboard, Ada' }).waitFor();
      await page.getByRole('button', { name: 'Save draft' }).click();
      await page.getByText('The draft is saved.').waitFor();
      await page.getByText('unpublished changes').waitFor();
      expect(dataOf(await resend.templates.get(id))).toMatchObject({
        html: secondHtml,
        status: 'published',
        has_unpublished_versions: true,
      });

      // Two versions in the history, both by the signed-in person; the first is reverted to a new draft.
      const versions = page.getByRole('table', { name: 'Versions' }).getByRole('row');
      await waitFor('two versions listed', async () => (await versions.count()) === 3);
      for (const row of [versions.nth(1), versions.nth(2)]) expect(await row.textContent()).toContain(team.admin.email);
      expect(await versions.nth(1).textContent()).toContain('current');
      expect(await versions.nth(2).textContent()).toContain('published');
      await checkPage(s, 'template-editor');
      // The documentation's picture: the fields, the code editor and the preview, as a laptop shows them.
      await page.setViewportSize({ width: 1280, height: 960 });
      await page.getByRole('heading', { name, level: 1 }).scrollIntoViewIfNeeded();
      await preview.getByRole('heading', { name: 'Welcome aboard, Ada' }).waitFor();
      await page.screenshot({ path: DOCS_SCREENSHOT });
      await page.setViewportSize(LAPTOP);

      await versions.nth(2).getByRole('button', { name: /^View/ }).click();
      await dialog('A version of the template')
        .getByTitle('Version preview')
        .contentFrame()
        .getByRole('heading', { name: 'Hello Ada' })
        .waitFor();
      await dialog('A version of the template').getByRole('button', { name: 'Close' }).click();

      await versions
        .nth(2)
        .getByRole('button', { name: /^Revert/ })
        .click();
      await dialog('Revert to this version?').getByRole('button', { name: 'Revert to a new draft' }).click();
      await page.getByText('Reverted: the editor shows the new draft.').waitFor();
      await preview.getByRole('heading', { name: 'Hello Ada' }).waitFor();
      await waitFor('three versions listed', async () => (await versions.count()) === 4);
      const reverted = dataOf(await resend.templates.get(id));
      expect(reverted).toMatchObject({ html: firstHtml, status: 'published', has_unpublished_versions: true });

      // A test to oneself, from the onboarding sender: it lands in the Dev inbox.
      await page.getByRole('button', { name: 'Send a test' }).click();
      await dialog('Send a test to yourself').getByRole('button', { name: 'Send the test' }).click();
      await dialog('Send a test to yourself').getByText(`Sent to ${team.admin.email}.`).waitFor();
      await dialog('Send a test to yourself').getByRole('link', { name: 'Open the test email' }).click();
      await page.getByRole('heading', { name: '[Test] Welcome, Ada', level: 1 }).waitFor();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dev inbox' }).click();
      await page
        .getByRole('list', { name: 'Kept messages' })
        .getByRole('link', { name: /\[Test\] Welcome, Ada/ })
        .waitFor();

      // The list: status, duplicate, delete after a confirmation.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Templates' }).click();
      const row = page.getByRole('row', { name: new RegExp(`^${name}`) });
      // (The list shown at once may be the one read before the publish, until it is read again.)
      await waitFor('the list read again', async () =>
        ((await row.textContent()) ?? '').includes('unpublished changes'),
      );
      await page.getByRole('button', { name: `Duplicate ${name}` }).click();
      const copy = page.getByRole('row', { name: new RegExp(`${name} \\(copy\\)`) });
      await copy.waitFor();
      await checkPage(s, 'templates');
      await page.getByRole('button', { name: `Delete ${name} (copy)` }).click();
      await dialog(`Delete ${name} (copy)?`).getByRole('button', { name: 'Delete the template' }).click();
      await waitFor('the copy deleted', async () => (await copy.count()) === 0);
      expect(dataOf(await resend.templates.list({ limit: 100 })).data.map((t) => t.name)).toEqual([name]);
      expect(s.problems()).toEqual([]);
    } finally {
      await s.close();
    }
  });
});
