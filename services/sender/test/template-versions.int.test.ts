// A template's version history through the real gateway and sender: who wrote each version (the API key, or
// the dashboard user of a session), which is current and which published, one version read whole, and a
// revert that starts a new draft and leaves the published version sending. The official resend SDK where
// it has the route (create, update, publish, get), fetch for the versions (Postline's own routes).
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import { dataOf, testResend, useSystem, type SharedSystem } from '@postline/testing';

jest.setTimeout(60_000);

const POSTGRES_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/;

type Answer = { status: number; body: Record<string, unknown> };
type VersionItem = {
  id: string;
  subject: string | null;
  author: { type: 'user' | 'api_key'; id: string } | null;
  current: boolean;
  published: boolean;
  published_at: string | null;
  created_at: string;
  updated_at: string;
};

const world = useSystem();
let system: SharedSystem;
let apiKey: string;
let keyId: string;
let resend: Resend;
let other: Resend;
let otherKey: string;
let user: { id: string; cookie: string; csrf: string };

beforeAll(async () => {
  ({ system } = world);
  const team = await system.admin('team', 'create', '--name', 'Template versions');
  apiKey = String(team.api_key);
  otherKey = String((await system.admin('team', 'create', '--name', 'Other')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  other = testResend(otherKey, system.apiUrl);
  keyId = dataOf(await resend.apiKeys.list()).data[0]!.id;
  const email = `editor-${Date.now().toString(36)}@example.com`;
  const made = await system.admin('user', 'create', '--team', String(team.team_id), '--email', email, '--name', 'Ed');
  user = { id: String(made.user_id), ...(await signIn(email, String(made.password))) };
}, 90_000);

/** Signs in as the dashboard does: its session cookie and CSRF token. */
async function signIn(email: string, password: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${system.apiUrl}/dashboard-api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(system.apiUrl).origin, 'user-agent': 'test' },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json()) as { csrf_token: string };
  if (res.status !== 201) throw new Error(`sign-in answered ${res.status} ${JSON.stringify(body)}`);
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: body.csrf_token };
}

/** A request with the team's API key (or another key), or as the signed-in dashboard user (`'session'`). */
async function call(method: string, path: string, opts: { as?: string; body?: unknown } = {}): Promise<Answer> {
  const auth: Record<string, string> =
    opts.as === 'session'
      ? { cookie: user.cookie, 'x-csrf-token': user.csrf, origin: new URL(system.apiUrl).origin }
      : { authorization: `Bearer ${opts.as ?? apiKey}` };
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { ...auth, 'content-type': 'application/json', 'user-agent': 'test' },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function versions(template: string, query = ''): Promise<VersionItem[]> {
  const answer = await call('GET', `/templates/${template}/versions${query}`);
  expect(answer.status).toBe(200);
  return answer.body.data as VersionItem[];
}

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;

describe('template versions', () => {
  it('lists versions newest first with their authors, reads one whole, and reverts to a new draft', async () => {
    const alias = unique('receipt-');
    const { id } = dataOf(
      await resend.templates.create({
        name: 'Receipt',
        alias,
        subject: 'Receipt {{{ORDER}}}',
        html: '<p>Order {{{ORDER}}}</p>',
        variables: [{ key: 'ORDER', type: 'string', fallbackValue: 'n/a' }],
      }),
    );
    const [first] = await versions(id);
    expect(await versions(id)).toEqual([
      {
        id: first!.id,
        subject: 'Receipt {{{ORDER}}}',
        author: { type: 'api_key', id: keyId },
        current: true,
        published: false,
        published_at: null,
        created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
        updated_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      },
    ]);

    dataOf(await resend.templates.publish(id));
    const published = dataOf(await resend.templates.get(id));
    expect((await versions(alias))[0]).toMatchObject({
      id: first!.id,
      current: true,
      published: true,
      published_at: published.published_at,
    });

    // A dashboard user's edit of the published version starts a new one, written by them; editing that draft
    // again changes it in place.
    expect(
      (await call('PATCH', `/templates/${id}`, { as: 'session', body: { html: '<p>#{{{ORDER}}}</p>' } })).status,
    ).toBe(200);
    expect(
      (await call('PATCH', `/templates/${id}`, { as: 'session', body: { html: '<p>No. {{{ORDER}}}</p>' } })).status,
    ).toBe(200);
    const [second, again] = await versions(id);
    expect(second).toMatchObject({
      author: { type: 'user', id: user.id },
      current: true,
      published: false,
      published_at: null,
    });
    expect(again).toMatchObject({ id: first!.id, current: false, published: true });
    expect((await versions(id)).length).toBe(2);

    const old = await call('GET', `/templates/${alias}/versions/${first!.id}`);
    expect(old.status).toBe(200);
    expect(old.body).toMatchObject({
      object: 'template_version',
      id: first!.id,
      template_id: id,
      subject: 'Receipt {{{ORDER}}}',
      html: '<p>Order {{{ORDER}}}</p>',
      text: null,
      from: null,
      reply_to: null,
      author: { type: 'api_key', id: keyId },
      published: true,
      current: false,
      variables: [expect.objectContaining({ key: 'ORDER', type: 'string', fallback_value: 'n/a' })],
    });
    expect((await call('GET', `/templates/${id}/versions/${second!.id}`)).body).toMatchObject({
      html: '<p>No. {{{ORDER}}}</p>',
      author: { type: 'user', id: user.id },
    });

    // Reverting to the first version, from the dashboard: a third version, the current draft, with its content;
    // the published version is still the first.
    const reverted = await call('POST', `/templates/${id}/versions/${first!.id}/revert`, { as: 'session' });
    expect(reverted.status).toBe(201);
    expect(reverted.body).toMatchObject({
      object: 'template_version',
      template_id: id,
      html: '<p>Order {{{ORDER}}}</p>',
      author: { type: 'user', id: user.id },
      current: true,
      published: false,
      published_at: null,
    });
    expect(reverted.body.id).not.toBe(first!.id);
    const history = await versions(id);
    expect(history.map((v) => v.id)).toEqual([reverted.body.id, second!.id, first!.id]);
    expect(history.map((v) => [v.current, v.published])).toEqual([
      [true, false],
      [false, false],
      [false, true],
    ]);
    const template = dataOf(await resend.templates.get(id));
    expect(template).toMatchObject({
      html: '<p>Order {{{ORDER}}}</p>',
      current_version_id: reverted.body.id,
      status: 'published',
      published_at: published.published_at,
      has_unpublished_versions: true,
    });
    const listed = dataOf(await resend.templates.list({ limit: 100 })).data.find((t) => t.id === id);
    expect(listed).toMatchObject({ has_unpublished_versions: true });

    // Publishing the revert: the first version keeps the time it was last published.
    dataOf(await resend.templates.publish(id));
    const after = await versions(id);
    expect(after[0]).toMatchObject({ published: true, published_at: expect.stringMatching(POSTGRES_TIMESTAMP) });
    expect(after[2]).toMatchObject({ published: false, published_at: published.published_at });
  });

  it('pages the history, answers 404 for another team’s template or version, 422 for a bad page', async () => {
    const { id } = dataOf(await resend.templates.create({ name: 'Paged', html: '<p>1</p>' }));
    dataOf(await resend.templates.publish(id));
    dataOf(await resend.templates.update(id, { html: '<p>2</p>' }));
    const { id: otherTemplate } = dataOf(await resend.templates.create({ name: 'Another', html: '<p>x</p>' }));
    const [newest, oldest] = await versions(id);

    const page = await call('GET', `/templates/${id}/versions?limit=1`);
    expect(page.body).toMatchObject({ object: 'list', has_more: true, data: [{ id: newest!.id }] });
    expect((await versions(id, `?limit=1&after=${newest!.id}`)).map((v) => v.id)).toEqual([oldest!.id]);

    const notFound = { statusCode: 404, name: 'not_found' };
    const theirs = (path: string, method = 'GET') => call(method, path, { as: otherKey });
    expect((await theirs(`/templates/${id}/versions`)).body).toEqual({ ...notFound, message: 'Template not found' });
    expect((await theirs(`/templates/${id}/versions/${oldest!.id}`)).body).toMatchObject(notFound);
    expect((await theirs(`/templates/${id}/versions/${oldest!.id}/revert`, 'POST')).body).toMatchObject(notFound);
    expect((await other.templates.get(id)).error).toMatchObject(notFound);

    const versionNotFound = { ...notFound, message: 'Template version not found' };
    expect((await call('GET', `/templates/${otherTemplate}/versions/${oldest!.id}`)).body).toEqual(versionNotFound);
    expect((await call('POST', `/templates/${otherTemplate}/versions/${oldest!.id}/revert`)).body).toEqual(
      versionNotFound,
    );
    expect((await call('GET', `/templates/${id}/versions/not-a-version`)).body).toEqual(versionNotFound);
    // Nothing was reverted meanwhile.
    expect((await versions(otherTemplate)).length).toBe(1);

    const badLimit = await call('GET', `/templates/${id}/versions?limit=0`);
    expect(badLimit.status).toBe(422);
    expect(badLimit.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    const both = await call('GET', `/templates/${id}/versions?after=${newest!.id}&before=${oldest!.id}`);
    expect(both.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });
});
