// A marketer's whole flow in the dashboard, in Chromium: contacts imported from a CSV with a property into a
// segment (the import watched to its end), a topic created, a template written with a variable and its
// fallback, previewed with a sample value and published; a broadcast composed from the template to the
// segment under the topic, its review blocking it once (no unsubscribe link), the fixed draft previewed as a
// contact (their property filled in), a test copy sent to the admin, then the broadcast sent: each
// subscribed contact gets one personalised message at the local sink MX, the unsubscribed and the opted-out
// none. A recipient follows a tracked link and the unsubscribe link, and the results page counts both. Then,
// under the approval setting, a member's broadcast waits until an admin approves it. (A template version's
// revert is templates.test.ts'.)
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  dataOf,
  observeBroker,
  testResend,
  uniqueDomain,
  useSystem,
  waitFor,
  type BrokerObserver,
  type SharedSystem,
  type SinkMessage,
} from '@postline/testing';
import { launchBrowser, openBrowserSession } from '@postline/testing/browser';
import { checkPage, createPerson, signIn, type Person } from './people.ts';

jest.setTimeout(180_000);

const RCPT = uniqueDomain('bcast');
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const world = useSystem({ rcptDomain: RCPT });
let system: SharedSystem;
let browser: Browser;
let events: BrokerObserver;
let resend: Resend;
let apiKey: string;
let admin: Person;
let member: Person;
let domain: string;
let segmentName: string;
let segmentId: string;
const topicName = `Product news ${Date.now().toString(36)}`;
const stamp = Date.now().toString(36);
const ada = `ada.${stamp}@${RCPT}`;
const bob = `bob.${stamp}@${RCPT}`;
const carl = `carl.${stamp}@${RCPT}`;
const dora = `dora.${stamp}@${RCPT}`;

beforeAll(async () => {
  system = world.system;
  browser = await launchBrowser();
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const team = await system.admin('team', 'create', '--name', 'Broadcasts');
  const teamId = String(team.team_id);
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  // The admin's address is at the sink's domain: their test copy arrives there.
  const adminEmail = `admin.${stamp}@${RCPT}`;
  const made = await system.admin(
    'user',
    'create',
    '--team',
    teamId,
    '--email',
    adminEmail,
    '--name',
    'Ada',
    '--role',
    'admin',
  );
  admin = { id: String(made.user_id), email: adminEmail, password: String(made.password), teamId };
  member = await createPerson(system, teamId, 'member', 'Mel');

  const verified = await createVerifiedDomain({ resend, dns: world.dns, events, name: `b${stamp}.example.com` });
  domain = verified.name;
  // Click tracking on a verified tracking host, so that the message's links are tracked.
  const since = events.messages.length;
  world.dns.set(`links.${domain}`, [{ type: 'CNAME', target: 'track.postline.test' }]);
  dataOf(await resend.domains.update({ id: verified.id, clickTracking: true, trackingSubdomain: 'links' }));
  await resend.domains.verify(verified.id);
  await events.waitFor(
    'tracking verified',
    (m) =>
      m.routingKey === 'internal.domain.state' &&
      m.envelope.data.domain_id === verified.id &&
      m.envelope.data.tracking_verified === true,
    { timeoutMs: 30_000, since },
  );

  dataOf(await resend.contactProperties.create({ key: 'plan', type: 'string', fallbackValue: 'free' }));
  segmentName = `Customers ${stamp}`;
  segmentId = dataOf(await resend.segments.create({ name: segmentName })).id;
}, 150_000);

afterAll(async () => {
  await events?.close();
  await browser?.close();
});

/**
 * Follows a tracked link as a reader's browser does: to the gateway, under the tracking host's name (its
 * token is sealed for that host; the tracking host is a CNAME to the gateway). Returns the answer's status.
 */
function followAsReader(link: string): Promise<number> {
  const url = new URL(link);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(url.pathname + url.search, system.apiUrl),
      { headers: { host: url.host, 'user-agent': CHROME } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const sinkFor = (to: string) => world.sink.messages.filter((m: SinkMessage) => m.to.includes(to));
const decoded = (m: SinkMessage) => m.raw.toString('utf8').replace(/=\r\n/g, '').replace(/=3D/g, '=');

describe('the Broadcasts pages', () => {
  it('imports contacts, writes a template, composes, reviews, tests and sends a broadcast, and shows its results', async () => {
    const s = await openBrowserSession(browser, system.apiUrl);
    const { page } = s;
    const audience = page.getByRole('navigation', { name: 'Audience' });
    const dialog = (title: string) => page.getByRole('dialog', { name: title });
    const main = page.getByRole('navigation', { name: 'Main' });
    try {
      await signIn(page, admin);

      // A topic, then the contacts imported into the segment with their plan; Carl unsubscribed.
      await main.getByRole('link', { name: 'Audience' }).click();
      await audience.getByRole('link', { name: 'Topics' }).click();
      await page.getByRole('button', { name: 'Create a topic' }).click();
      await dialog('Create a topic').getByLabel('Name', { exact: true }).fill(topicName);
      await dialog('Create a topic').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('row', { name: new RegExp(topicName) }).waitFor();
      const csv = [
        'Email,First name,plan,Unsubscribed',
        `${ada},Ada,pro,false`,
        `${bob},Bob,,false`,
        `${carl},Carl,,true`,
        `${dora},Dora,,false`,
      ].join('\r\n');
      await audience.getByRole('link', { name: 'Imports' }).click();
      await page.getByRole('link', { name: 'Import a CSV' }).click();
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.getByRole('region', { name: "The file's first rows" }).getByText(ada).waitFor();
      // Named like the team's property, the column maps itself once the properties are read.
      await waitFor(
        'the plan column mapped',
        async () => (await page.getByLabel('Column plan imports into').inputValue()) === 'property:plan',
      );
      await page.getByLabel(segmentName).check();
      await page.getByRole('button', { name: 'Start the import' }).click();
      await page.getByText('completed').waitFor({ timeout: 60_000 });
      expect((await page.getByRole('region', { name: 'Progress' }).textContent())?.replace(/\s+/g, ' ')).toContain(
        'Rows4Created4',
      );
      // Dora leaves the topic (as her preference page would record it).
      const topic = dataOf(await resend.topics.list()).data.find((t) => t.name === topicName)!;
      dataOf(await resend.contacts.topics.update({ email: dora, topics: [{ id: topic.id, subscription: 'opt_out' }] }));

      // A template with a variable and its fallback, previewed with a sample value, then published.
      await main.getByRole('link', { name: 'Templates' }).click();
      await page.getByRole('button', { name: 'Create a template' }).click();
      await dialog('Create a template').getByLabel('Name').fill(`Spring ${stamp}`);
      await dialog('Create a template').getByRole('button', { name: 'Create' }).click();
      await page.getByRole('heading', { name: `Spring ${stamp}`, level: 1 }).waitFor();
      const templatePreview = page.getByTitle('Preview', { exact: true }).contentFrame();
      // Its own variable (OFFER) takes a sample value, then its fallback; the contact's first name stays a
      // contact placeholder, filled for each contact when the broadcast goes.
      await page
        .getByRole('textbox', { name: 'HTML' })
        .fill('<p>Hi {{{contact.first_name|there}}}, {{{OFFER}}}. <a href="https://example.org/news">News</a></p>');
      await page.getByLabel('Subject').fill('Hello {{{contact.first_name|there}}}');
      await page.getByRole('button', { name: 'Add a variable' }).click();
      await page.getByLabel('Key of variable 1').fill('OFFER');
      await page.getByLabel('Fallback of OFFER').fill('our spring sale is on');
      await page.getByLabel('Sample value of OFFER').fill('a free month');
      await templatePreview.getByText('Hi there, a free month.').waitFor();
      await page.getByLabel('Sample value of OFFER').fill('');
      await templatePreview.getByText('Hi there, our spring sale is on.').waitFor();
      await page.getByRole('button', { name: 'Save draft' }).click();
      await page.getByText('The draft is saved.').waitFor();
      await page.getByRole('button', { name: 'Publish' }).click();
      await page.getByText('Published: sends with this template now use this version.').waitFor();

      // The broadcast, from the template.
      await main.getByRole('link', { name: 'Broadcasts' }).click();
      await page.getByRole('heading', { name: 'Broadcasts', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'New broadcast' }).click();
      await page.getByLabel('Start from a template').selectOption({ label: `Spring ${stamp}` });
      await page.getByRole('button', { name: 'Use the template' }).click();
      const form = page.getByRole('form', { name: 'Broadcast' });
      await waitFor('the template filled in', async () => (await form.getByLabel('Subject').inputValue()) !== '');
      expect(await form.getByLabel('Subject').inputValue()).toBe('Hello {{{contact.first_name|there}}}');
      expect(await form.getByLabel('HTML').inputValue()).toContain('our spring sale is on');
      await form.getByLabel('Name').fill('Spring news');
      await form.getByLabel('Segment').selectOption({ label: segmentName });
      await form.getByLabel('Topic').selectOption({ label: topicName });
      await form.getByLabel('From').fill(`Acme <news@${domain}>`);
      const html = `${await form.getByLabel('HTML').inputValue()}<p>Your plan is {{{contact.plan}}}.</p>`;
      await form.getByLabel('HTML').fill(html);
      await form.getByRole('button', { name: 'Create the draft' }).click();
      await page.getByRole('heading', { name: 'Spring news', level: 1 }).waitFor();

      // The review blocks it: no unsubscribe link.
      const review = page.getByRole('region', { name: 'Review' });
      await review.getByText(/It has no unsubscribe link/).waitFor();
      expect(await review.getByRole('button', { name: 'Send now' }).isDisabled()).toBe(true);
      await checkPage(s, 'broadcast-review');

      await form.getByLabel('HTML').fill(`${html}<p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>`);
      await form.getByRole('button', { name: 'Save the draft' }).click();
      await page.getByText('The draft is saved.').waitFor();
      await review.getByRole('button', { name: 'Review again' }).click();
      await review.getByText('2 contacts will receive it (after unsubscribes and topic opt-outs).').first().waitFor();
      await waitFor('Send now enabled', async () => review.getByRole('button', { name: 'Send now' }).isEnabled());

      // The preview as Ada shows her plan.
      const preview = page.getByRole('region', { name: 'Preview' });
      await preview.getByLabel('Preview as').selectOption({ label: `Ada <${ada}>` });
      await page.getByTitle(`The broadcast as ${ada} gets it`).contentFrame().getByText('Your plan is pro').waitFor();

      await preview.getByRole('button', { name: 'Send a test to me' }).click();
      await page.getByText(`A test copy is on its way to ${admin.email}.`).waitFor();
      await waitFor('the test copy at the sink', () => sinkFor(admin.email).length === 1, 30_000);
      expect(decoded(sinkFor(admin.email)[0]!)).toContain('Subject: [Test] Hello Ada');

      await review.getByRole('button', { name: 'Send now' }).click();
      await page.getByRole('heading', { name: 'Results' }).waitFor();
      await waitFor('Ada and Bob reached', () => sinkFor(ada).length === 1 && sinkFor(bob).length === 1, 30_000);
      expect(sinkFor(carl)).toHaveLength(0);
      expect(sinkFor(dora)).toHaveLength(0);
      const toAda = decoded(sinkFor(ada)[0]!);
      expect(toAda).toContain('Subject: Hello Ada');
      expect(toAda).toContain('Hi Ada, our spring sale is on.');
      expect(toAda).toContain('Your plan is pro');
      expect(decoded(sinkFor(bob)[0]!)).toContain('Your plan is free');

      // Ada follows the tracked link (served by the gateway on any host) and unsubscribes in one click.
      const tracked = /href="(https?:\/\/links\.[^"]+\/c\/[^"]+)"/.exec(toAda)?.[1] ?? '';
      expect(tracked).not.toBe('');
      const click = await followAsReader(tracked.replaceAll('&amp;', '&'));
      expect(click).toBe(302);
      const unsubscribe = /href="(https?:\/\/[^"]+\/unsubscribe\/[^"]+)"/.exec(toAda)?.[1] ?? '';
      const left = await fetch(unsubscribe, {
        method: 'POST',
        body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }),
      });
      expect(left.status).toBe(200);

      // The results page reads them again every few seconds.
      await page.getByRole('rowheader', { name: 'https://example.org/news' }).waitFor({ timeout: 30_000 });
      const counts = page.getByRole('region', { name: 'Results' });
      await waitFor(
        'the click and the unsubscribe counted',
        async () => {
          const shown = (await counts.innerText()).replace(/\s+/g, ' ');
          return /Unsubscribed 1\b/.test(shown) && /Clicked by people (1 0|0 1) more/.test(shown);
        },
        30_000,
      );
      // The recipients by outcome, read again as the broadcast goes: both sent; Ada among the unsubscribed.
      const recipients = page.getByRole('table', { name: 'Recipients: sent' });
      await recipients.getByRole('rowheader', { name: ada }).waitFor();
      await recipients.getByRole('rowheader', { name: bob }).waitFor();
      await page.getByLabel('Outcome').selectOption({ label: 'Unsubscribed' });
      const unsubscribed = page.getByRole('table', { name: 'Recipients: unsubscribed' });
      // (The sent rows stay on screen, the table busy, until the unsubscribed are read.)
      await waitFor(
        'only Ada unsubscribed',
        async () => (await unsubscribed.getByRole('rowheader').allTextContents()).join() === ada,
      );
      await checkPage(s, 'broadcast-results');
    } finally {
      await s.close();
    }
  });

  it("holds a member's broadcast until an admin approves it", async () => {
    const adminSession = await openBrowserSession(browser, system.apiUrl);
    const memberSession = await openBrowserSession(browser, system.apiUrl);
    try {
      await signIn(adminSession.page, admin, '/dashboard/broadcasts');
      const setting = adminSession.page.getByLabel("Members' broadcasts wait for an admin's approval");
      await setting.click();
      await waitFor('the box checked once saved', () => setting.isChecked());
      await waitFor('the setting saved', async () => {
        const res = await fetch(`${system.apiUrl}/broadcasts/settings`, {
          headers: { authorization: `Bearer ${apiKey}` },
        });
        return ((await res.json()) as { require_approval?: boolean }).require_approval === true;
      });

      const { id } = dataOf(
        await resend.broadcasts.create({
          segmentId,
          name: 'Member news',
          from: `Acme <news@${domain}>`,
          subject: 'From a member',
          html: '<p>Hi <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
        }),
      );
      const { page } = memberSession;
      await signIn(page, member, `/dashboard/broadcasts/${id}`);
      await page.getByRole('heading', { name: 'Member news', level: 1 }).waitFor();
      const review = page.getByRole('region', { name: 'Review' });
      await waitFor('Send now enabled', async () => review.getByRole('button', { name: 'Send now' }).isEnabled());
      await review.getByRole('button', { name: 'Send now' }).click();
      await page
        .getByText(/waits for an admin.s approval/)
        .first()
        .waitFor();
      expect(dataOf(await resend.broadcasts.get(id)).status).toBe('awaiting_approval');

      const admins = adminSession.page;
      await admins.goto(`/dashboard/broadcasts/${id}`);
      await admins.getByRole('region', { name: 'Approval' }).getByRole('button', { name: 'Approve' }).click();
      await admins.getByRole('heading', { name: 'Results' }).waitFor();
      await waitFor(
        'the approved broadcast sent',
        async () => dataOf(await resend.broadcasts.get(id)).status === 'sent',
      );
    } finally {
      await memberSession.close();
      await adminSession.close();
    }
  });
});
