// The first five minutes: a team with no domain sends from the onboarding sender (onboarding@resend.dev, as
// with Resend, or onboarding@postline.test) to the test addresses, which behave exactly as Resend's
// (delivered@, bounced@, complained@, suppressed@, with +label), at resend.dev as at postline.test, and
// nothing leaves the install. Through the official resend SDK, the real gateway and sender.
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import { createVerifiedDomain, dataOf, testResend, useSystem, waitFor, type SharedSystem } from '@postline/testing';

jest.setTimeout(60_000);

const world = useSystem();
let system: SharedSystem;
let apiKey: string;
let resend: Resend;

async function get(path: string, key = apiKey): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${system.apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

async function lastEventOf(id: string, key = apiKey): Promise<string> {
  return String((await get(`/emails/${id}`, key)).body.last_event);
}

type Send = Parameters<Resend['emails']['send']>[0];
const send = (options: Partial<Send>, client = resend) =>
  client.emails.send({
    from: 'Acme <onboarding@resend.dev>',
    to: 'delivered@resend.dev',
    subject: 'Hello',
    text: 'Hello',
    ...options,
  } as Send);

beforeAll(async () => {
  ({ system } = world);
  const team = await system.admin('team', 'create', '--name', 'Brand new');
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
});

describe('the onboarding sender', () => {
  it('sends to the test addresses before any domain is verified, each with its outcome', async () => {
    const outcomes: [string, string][] = [
      ['delivered@resend.dev', 'delivered'],
      ['bounced+first@resend.dev', 'bounced'],
      ['complained@resend.dev', 'complained'],
      ['suppressed@resend.dev', 'suppressed'],
    ];
    const ids = await Promise.all(outcomes.map(async ([to]) => dataOf(await send({ to })).id));
    const viaPostline = dataOf(
      await send({ from: 'onboarding@postline.test', to: ['delivered+a@postline.test', 'delivered+b@postline.test'] }),
    ).id;
    await waitFor('each test address’s outcome', async () => {
      const events = await Promise.all([...ids, viaPostline].map((id) => lastEventOf(id)));
      return events.join() === [...outcomes.map(([, e]) => e), 'delivered'].join();
    });
    const bounced = (await get(`/emails/${ids[1]}/recipients`)).body.data as Record<string, unknown>[];
    expect(bounced[0]).toMatchObject({ status: 'bounced', last_code: 550, bounce_type: 'Permanent' });
    // A test address never joins the suppression list: the same address works in every test run.
    expect((await get('/suppressions/bounced+first@resend.dev')).status).toBe(404);
    // A batch, as an integration's tests send one.
    const batch = await resend.batch.send([
      { from: 'onboarding@resend.dev', to: 'delivered@resend.dev', subject: 'One', text: '1' },
      { from: 'onboarding@resend.dev', to: 'delivered+two@resend.dev', subject: 'Two', text: '2' },
    ]);
    expect(dataOf(batch).data).toHaveLength(2);
  });

  it('sends to nobody else, and is the only address at a test domain a team may send from', async () => {
    const refused = async (options: Partial<Send>) => {
      const { error } = await send(options);
      expect(error).toMatchObject({ statusCode: 403, name: 'validation_error' });
      return error!.message;
    };
    expect(await refused({ to: 'someone@example.com' })).toBe(
      "onboarding@resend.dev sends only to the test addresses (delivered@, bounced@, complained@ or suppressed@resend.dev) and to your team's members, not to someone@example.com. Verify a domain of yours to send to anyone.",
    );
    expect(await refused({ to: 'delivered@resend.dev', cc: 'boss@example.com' })).toContain('not to boss@example.com');
    expect(await refused({ to: 'delivered@resend.dev', bcc: 'hidden@example.com' })).toContain(
      'not to hidden@example.com',
    );
    expect(await refused({ from: 'hello@resend.dev' })).toContain('or send from onboarding@resend.dev');
    expect(await refused({ from: 'onboarding@example.com' })).toContain('The example.com domain is not verified');
  });

  it("sends to the team's members too, into the development inbox: nothing leaves the install", async () => {
    // A new team, its member added before its first send (the gateway keeps a team's members for 30 s).
    const team = await system.admin('team', 'create', '--name', 'With members');
    const key = String(team.api_key);
    const client = testResend(key, system.apiUrl);
    const member = `Member.${Date.now()}@example.com`;
    await system.admin('user', 'create', '--team', String(team.team_id), '--email', member, '--name', 'Mia Member');
    const id = dataOf(
      await send({ to: member.toLowerCase(), subject: 'Welcome aboard', html: '<p>Hi</p>' }, client),
    ).id;
    await waitFor('kept and delivered', async () => (await lastEventOf(id, key)) === 'delivered');
    const inbox = (await get('/dev-inbox', key)).body;
    expect(inbox).toEqual({ object: 'dev_inbox', enabled: false, count: 1 });
    const list = (await get('/dev-inbox/messages', key)).body.data as { id: string; email_id: string; to: string[] }[];
    expect(list).toEqual([expect.objectContaining({ email_id: id, to: [member.toLowerCase()] })]);
    const message = (await get(`/dev-inbox/messages/${list[0]!.id}`, key)).body as {
      headers: { name: string; value: string }[];
      html: string;
    };
    // Made as any message is: signed (by the install's own onboarding key).
    const signature = message.headers.find((header) => header.name === 'DKIM-Signature')?.value ?? '';
    expect(signature).toMatch(/d=resend\.dev;.*s=onboarding;/s);
    expect(message.html).toContain('<p>Hi</p>');
    const attempts = (await get(`/emails/${id}/attempts`, key)).body.data as { mx: string }[];
    expect(attempts.map((attempt) => attempt.mx)).toEqual(['dev-inbox']);
    // Another team's member is not this team's.
    const { error } = await send({ to: member });
    expect(error).toMatchObject({ statusCode: 403, message: expect.stringContaining(`not to ${member}`) });
  });

  it('takes a raw message too (as the SMTP relay posts one), with or without an idempotency key', async () => {
    const raw = (to: string) =>
      [
        'From: Acme <onboarding@resend.dev>',
        `To: ${to}`,
        'Subject: Raw hello',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Hello from a raw message.',
        '',
      ].join('\r\n');
    const post = (to: string, envelopeTo: string, key?: string) =>
      fetch(`${system.apiUrl}/emails`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'message/rfc822',
          'postline-envelope-to': envelopeTo,
          ...(key ? { 'idempotency-key': key } : {}),
        },
        body: raw(to),
      });
    for (const key of [undefined, `raw-${Date.now()}`]) {
      const ok = await post('delivered@resend.dev', 'delivered+raw@resend.dev', key);
      expect(ok.status).toBe(200);
      const id = ((await ok.json()) as { id: string }).id;
      await waitFor('the raw message delivered', async () => (await lastEventOf(id)) === 'delivered');
      // The envelope decides who gets it: a header that names a test address does not let it out.
      const out = await post('delivered@resend.dev', 'someone@example.com', key ? `${key}-out` : undefined);
      expect(out.status).toBe(403);
      expect(((await out.json()) as { message: string }).message).toContain('not to someone@example.com');
    }
  });

  it('lets a team with its own domain send to the test addresses too, nothing leaving the install', async () => {
    const team = await system.admin('team', 'create', '--name', 'Established');
    const key = String(team.api_key);
    const client = testResend(key, system.apiUrl);
    const name = `onboarded-${Date.now()}.example.com`;
    const domain = await createVerifiedDomain({ resend: client, dns: world.dns, env: system.env, name });
    // resend.dev has no MX in this install's DNS: only the sandbox can deliver to it.
    const id = dataOf(await send({ from: `hi@${name}`, to: 'delivered+ours@resend.dev' }, client)).id;
    await waitFor('the test address delivered', async () => (await lastEventOf(id, key)) === 'delivered');
    // A key limited to one domain sends only from it, not as the onboarding sender.
    const limited = dataOf(
      await client.apiKeys.create({ name: 'limited', permission: 'sending_access', domain_id: domain.id }),
    );
    const { error } = await send({}, testResend(limited.token, system.apiUrl));
    expect(error).toMatchObject({
      statusCode: 403,
      message: expect.stringContaining('can only send from its own domain'),
    });
  });
});
