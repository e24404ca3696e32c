// API fuzzing through the gateway: random methods, paths (every route family, with real, foreign, malformed
// and unicode ids), query strings, headers, content types, bodies and sizes. The properties: no answer is a
// 5xx; every error is the JSON body `{statusCode, name, message}` with a name and the status it claims; and
// afterwards every list still reads, item by item (nothing half-written).
import fc from 'fast-check';
import { request, Agent } from 'undici';
import type { System } from '@postline/testing';

export type FuzzRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
};

export type FuzzContext = {
  apiUrl: string;
  apiKey: string;
  /** Ids that exist in the team (an email, a domain, a contact, ...) so that routes go past their 404s. */
  knownIds: string[];
};

/** The public route families and the sub-routes under an id, as the gateway serves them. */
const FAMILIES = [
  'emails',
  'emails/batch',
  'emails/receiving',
  'domains',
  'api-keys',
  'webhooks',
  'contacts',
  'contacts/imports',
  'segments',
  'audiences',
  'topics',
  'broadcasts',
  'templates',
  'suppressions',
  'contact-properties',
  'logs',
  'automations',
  'emails/metrics',
  'suppressions/batch/add',
  'suppressions/batch/remove',
];
const SUB_ROUTES = [
  '',
  '/cancel',
  '/share',
  '/attachments',
  '/verify',
  '/send',
  '/publish',
  '/duplicate',
  '/contacts',
  '/segments',
  '/topics',
  '/signing-secret/rotate',
  '/replay',
  '/attempts',
  '/events',
  '/recipients',
  '/clicked-links',
  '/versions',
];
const PUBLIC = ['/share/', '/downloads/', '/unsubscribe/', '/o/', '/c/', '/inbound/'];

/** Field names the routes read, so that random bodies reach past "unknown field" into the rules. */
const FIELDS = [
  'from',
  'to',
  'cc',
  'bcc',
  'reply_to',
  'subject',
  'html',
  'text',
  'scheduled_at',
  'headers',
  'tags',
  'attachments',
  'template',
  'topic_id',
  'name',
  'value',
  'email',
  'first_name',
  'last_name',
  'unsubscribed',
  'properties',
  'segments',
  'topics',
  'permission',
  'domain_id',
  'region',
  'custom_return_path',
  'capabilities',
  'open_tracking',
  'click_tracking',
  'tracking_subdomain',
  'tls',
  'endpoint',
  'events',
  'status',
  'audience_id',
  'segment_id',
  'content',
  'filename',
  'path',
  'variables',
  'id',
  'key',
  'type',
  'fallback_value',
  'default_subscription',
  'visibility',
  'expires_in',
  'limit',
  'after',
  'before',
];

const unicode = fc.string({ unit: 'grapheme', maxLength: 40 });
const scalar: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 40 }),
  unicode,
  fc.constantFrom(
    '',
    ' ',
    'a@b.c',
    'Acme <onboarding@postline.test>',
    'delivered@postline.test',
    '2026-11-25T12:00:00Z',
    'in 1 min',
    '\u0000',
    '\r\nBcc: x@y.z',
    '../../etc/passwd',
    '<script>',
    'null',
    '{{{name}}}',
    'x'.repeat(5000),
  ),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.uuid(),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('value'), { maxLength: 4 }), tie('object')),
  object: fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 12 })), tie('value'), {
    maxKeys: 8,
  }),
})).value;

const idSegment = (known: string[]) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...(known.length > 0 ? known : ['00000000-0000-7000-8000-000000000000'])) },
    { weight: 1, arbitrary: fc.uuid() },
    {
      weight: 1,
      arbitrary: fc.constantFrom('x', '0', '-1', '%00', '%2e%2e', '..', 'null', 'a'.repeat(300), '%F0%9F%92%A9', '%ZZ'),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map(encodeURIComponent) },
  );

const query = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.constantFrom(
          'limit',
          'after',
          'before',
          'html_format',
          'status',
          'start_date',
          'end_date',
          'granularity',
          'x',
        ),
        fc.oneof(
          fc.constantFrom('0', '1', '100', '101', '-5', 'abc', '', 'cid', 'data_uri'),
          fc.uuid(),
          fc.string({ maxLength: 10 }),
        ),
      ),
      { maxLength: 3 },
    )
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`),
);

const path = (known: string[]) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...FAMILIES),
          fc.option(fc.tuple(idSegment(known), fc.constantFrom(...SUB_ROUTES), fc.option(idSegment(known)))),
        )
        .map(([family, rest]) =>
          rest === null ? `/${family}` : `/${family}/${rest[0]}${rest[1]}${rest[2] === null ? '' : `/${rest[2]}`}`,
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...PUBLIC), fc.string({ maxLength: 80 }))
        .map(([p, t]) => `${p}${encodeURIComponent(t)}`),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => `/${encodeURIComponent(s)}`) },
  );

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'message/rfc822',
  'application/octet-stream',
  undefined,
);

const body = fc.oneof(
  { weight: 6, arbitrary: json.map((v) => Buffer.from(JSON.stringify(v))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('{', '[]', 'null', '"x"', '{"from":', '\u0000', 'a'.repeat(70_000))
      .map((s) => Buffer.from(s)),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/**
 * Valid requests of each family (with `{from}`, `{rcpt}` and `{id}` filled in), which the fuzzer mutates one
 * field at a time so that it reaches the rules behind validation, not only the validation.
 */
const TEMPLATES: { method: string; path: string; body?: Record<string, unknown> }[] = [
  {
    method: 'POST',
    path: '/emails',
    body: { from: '{from}', to: ['{rcpt}'], subject: 'Hi', html: '<p>Hi</p>', tags: [{ name: 'a', value: 'b' }] },
  },
  {
    method: 'POST',
    path: '/emails',
    body: { from: '{from}', to: '{rcpt}', subject: 'Later', text: 'x', scheduled_at: 'in 1 hour' },
  },
  {
    method: 'POST',
    path: '/emails',
    body: {
      from: '{from}',
      to: ['{rcpt}'],
      subject: 'Att',
      html: 'x',
      attachments: [{ filename: 'a.txt', content: 'aGVsbG8=' }],
    },
  },
  { method: 'POST', path: '/emails/batch', body: { list: true } },
  { method: 'PATCH', path: '/emails/{id}', body: { scheduled_at: '2030-01-01T00:00:00Z' } },
  { method: 'POST', path: '/emails/{id}/share', body: { expires_in: '1 hour' } },
  { method: 'POST', path: '/domains', body: { name: 'new.fuzz.example.com', region: 'us-east-1' } },
  { method: 'PATCH', path: '/domains/{id}', body: { open_tracking: true, click_tracking: false, tls: 'enforced' } },
  { method: 'POST', path: '/api-keys', body: { name: 'k', permission: 'sending_access' } },
  {
    method: 'POST',
    path: '/contacts',
    body: { email: 'c@fuzz.example.com', first_name: 'C', unsubscribed: false, properties: { company: 'x' } },
  },
  { method: 'PATCH', path: '/contacts/{id}', body: { first_name: 'D', unsubscribed: true } },
  { method: 'POST', path: '/segments', body: { name: 's' } },
  { method: 'POST', path: '/topics', body: { name: 't', default_subscription: 'opt_out', visibility: 'public' } },
  { method: 'PATCH', path: '/contacts/{id}/topics', body: { topics: [{ id: '{id}', subscription: 'opt_in' }] } },
  {
    method: 'POST',
    path: '/templates',
    body: { name: 'n', html: '<p>{{{X}}}</p>', variables: [{ key: 'X', type: 'string', fallback_value: 'y' }] },
  },
  {
    method: 'POST',
    path: '/broadcasts',
    body: { segment_id: '{id}', from: '{from}', subject: 's', html: '<p>x</p>', name: 'b' },
  },
  { method: 'POST', path: '/broadcasts/{id}/send', body: { scheduled_at: 'in 2 hours' } },
  {
    method: 'POST',
    path: '/webhooks',
    body: { endpoint: 'https://hooks.fuzz.example.com/x', events: ['email.sent', 'email.delivered'] },
  },
  { method: 'PATCH', path: '/webhooks/{id}', body: { status: 'disabled' } },
  { method: 'POST', path: '/suppressions/batch/add', body: { emails: ['s@fuzz.example.com'] } },
  { method: 'POST', path: '/contact-properties', body: { key: 'plan', type: 'number', fallback_value: 1 } },
];

function fill(value: unknown, ctx: FuzzContext, pickId: () => string): unknown {
  if (typeof value === 'string') {
    return value
      .replace('{from}', 'Fuzz <fuzz@fuzz.example.com>')
      .replace('{rcpt}', 'x@fuzz-rcpt.example.net')
      .replace('{id}', pickId());
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, ctx, pickId));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, ctx, pickId)]));
  return value;
}

/** A template request with one field dropped, replaced or added (or none). */
function mutatedTemplate(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      template: fc.constantFrom(...TEMPLATES),
      ids: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
      mutation: fc.constantFrom('none', 'drop', 'replace', 'add'),
      field: fc.nat(),
      value: json,
      extraKey: fc.constantFrom(...FIELDS),
    })
    .map(({ template, ids, mutation, field, value, extraKey }) => {
      let n = 0;
      const pickId = () => ctx.knownIds[(ids[n++ % ids.length] ?? 0) % Math.max(1, ctx.knownIds.length)] ?? 'none';
      const path = String(fill(template.path, ctx, pickId));
      let body: unknown = template.body ? fill(template.body, ctx, pickId) : undefined;
      if (template.path === '/emails/batch')
        body = [fill(TEMPLATES[0]!.body, ctx, pickId), fill(TEMPLATES[0]!.body, ctx, pickId)];
      if (body && typeof body === 'object' && !Array.isArray(body)) {
        const record = { ...(body as Record<string, unknown>) };
        const keys = Object.keys(record);
        const key = keys[field % Math.max(1, keys.length)];
        if (mutation === 'drop' && key) delete record[key];
        if (mutation === 'replace' && key) record[key] = value;
        if (mutation === 'add') record[extraKey] = value;
        body = record;
      }
      return {
        method: template.method,
        path,
        headers: { authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
      };
    });
}

/** One random request of the team: a mutated valid request, or anything at all. */
export function fuzzRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc.oneof({ weight: 1, arbitrary: mutatedTemplate(ctx) }, { weight: 1, arbitrary: anyRequest(ctx) });
}

function anyRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'),
      path: path(ctx.knownIds),
      query,
      contentType,
      idempotencyKey: fc.option(fc.oneof(fc.string({ maxLength: 20 }), fc.constant('k'.repeat(300))), { freq: 4 }),
      auth: fc.constantFrom('key', 'key', 'key', 'key', 'key', 'key', 'key', 'key', 'none', 'garbage'),
      body,
    })
    .map((r) => {
      const headers: Record<string, string> = {};
      if (r.contentType !== undefined) headers['content-type'] = r.contentType;
      if (r.idempotencyKey !== null) headers['idempotency-key'] = r.idempotencyKey.replace(/[^\x20-\x7e]/g, '');
      if (r.auth === 'key') headers.authorization = `Bearer ${ctx.apiKey}`;
      if (r.auth === 'garbage') headers.authorization = 'Bearer pl_not_a_key';
      const withBody = r.method !== 'GET' && r.method !== 'HEAD';
      return { method: r.method, path: `${r.path}${r.query}`, headers, body: withBody ? r.body : undefined };
    });
}

const agent = new Agent({ connections: 16, keepAliveTimeout: 10_000 });

export type FuzzAnswer = { status: number; body: string };

export async function send(apiUrl: string, req: FuzzRequest): Promise<FuzzAnswer> {
  const res = await request(`${apiUrl}${req.path}`, {
    method: req.method as 'GET',
    headers: req.headers,
    body: req.body,
    dispatcher: agent,
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
  });
  return { status: res.statusCode, body: await res.body.text() };
}

/** Why an answer breaks the properties, or undefined when it keeps them. */
export function problemOf(req: FuzzRequest, answer: FuzzAnswer): string | undefined {
  if (answer.status >= 500) return `${answer.status}: ${answer.body.slice(0, 300)}`;
  if (answer.status < 400 || req.method === 'HEAD') return undefined;
  // A public link's 404 and every API error are JSON errors; nothing answers an HTML page or a bare text.
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return `${answer.status} is not JSON: ${answer.body.slice(0, 200)}`;
  }
  const error = parsed as { statusCode?: unknown; name?: unknown; message?: unknown };
  if (error.statusCode !== answer.status) return `statusCode ${String(error.statusCode)} in a ${answer.status}`;
  if (typeof error.name !== 'string' || !/^[a-z_]+$/.test(error.name)) return `bad error name ${String(error.name)}`;
  if (typeof error.message !== 'string' || error.message.length === 0) return 'error without a message';
  return undefined;
}

/** Runs `runs` random requests (fast-check shrinks a failure to the smallest request that still breaks). */
export async function fuzzApi(
  ctx: FuzzContext,
  runs: number,
  seed?: number,
): Promise<{ statuses: Map<number, number> }> {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(fuzzRequest(ctx), async (req) => {
      const answer = await send(ctx.apiUrl, req);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const problem = problemOf(req, answer);
      if (problem) throw new Error(`${req.method} ${req.path} → ${problem}`);
    }),
    { numRuns: runs, ...(seed === undefined ? {} : { seed }), endOnFailure: false },
  );
  return { statuses };
}

/** Every list route of the team, read to its end with each item fetched by id: no row left half-written. */
export const LIST_ROUTES = [
  '/emails',
  '/domains',
  '/webhooks',
  '/contacts',
  '/segments',
  '/topics',
  '/broadcasts',
  '/templates',
  '/contact-properties',
  '/logs',
];

export async function checkListsReadable(ctx: FuzzContext): Promise<string[]> {
  const problems: string[] = [];
  const headers = { authorization: `Bearer ${ctx.apiKey}` };
  for (const route of LIST_ROUTES) {
    let after: string | undefined;
    for (let page = 0; page < 50; page++) {
      const list = await send(ctx.apiUrl, {
        method: 'GET',
        path: `${route}?limit=100${after ? `&after=${after}` : ''}`,
        headers,
        body: undefined,
      });
      if (list.status !== 200) {
        problems.push(`GET ${route} → ${list.status} ${list.body.slice(0, 200)}`);
        break;
      }
      const parsed = JSON.parse(list.body) as { data: { id?: string }[]; has_more?: boolean };
      for (const item of parsed.data) {
        if (!item.id) continue;
        const one = await send(ctx.apiUrl, { method: 'GET', path: `${route}/${item.id}`, headers, body: undefined });
        if (one.status !== 200) problems.push(`GET ${route}/${item.id} → ${one.status} ${one.body.slice(0, 200)}`);
      }
      if (!parsed.has_more || parsed.data.length === 0) break;
      after = parsed.data.at(-1)?.id;
    }
  }
  return problems;
}

/**
 * A team with a high rate limit (the fuzzer is not testing the limit) and one of each resource, whose ids
 * the fuzzer uses so that routes under an id reach their rules, not only their 404.
 */
export async function seedTeam(
  system: Pick<System, 'admin' | 'apiUrl'>,
  verifyDomain: (apiKey: string) => Promise<string>,
): Promise<FuzzContext> {
  const { team_id: teamId, api_key: apiKey } = system.admin('team', 'create', '--name', 'fuzz');
  system.admin('team', 'set-rate-limit', '--team', String(teamId), '--per-second', '100000');
  const ctx: FuzzContext = { apiUrl: system.apiUrl, apiKey: String(apiKey), knownIds: [] };
  const domain = await verifyDomain(ctx.apiKey);
  const from = `Fuzz <fuzz@${domain}>`;
  const headers = { authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' };
  const create = async (path: string, body: unknown) => {
    const answer = await send(ctx.apiUrl, { method: 'POST', path, headers, body: Buffer.from(JSON.stringify(body)) });
    if (answer.status >= 300) throw new Error(`seeding ${path}: ${answer.status} ${answer.body}`);
    const id = (JSON.parse(answer.body) as { id?: string }).id;
    if (id) ctx.knownIds.push(id);
    return id;
  };
  const segment = await create('/segments', { name: 'fuzzed' });
  await create('/contacts', { email: 'someone@fuzz.example.com', first_name: 'Some' });
  await create('/topics', { name: 'News', default_subscription: 'opt_in' });
  await create('/templates', { name: 'hello', html: '<p>Hi {{{NAME}}}</p>', subject: 'Hi' });
  await create('/contact-properties', { key: 'company', type: 'string' });
  await create('/webhooks', { endpoint: 'https://hooks.fuzz.example.com/in', events: ['email.sent'] });
  await create('/emails', { from, to: ['someone@fuzz-rcpt.example.net'], subject: 'seed', html: '<p>seed</p>' });
  await create('/broadcasts', { segment_id: segment, from, subject: 'seed', html: '<p>seed</p>' });
  return ctx;
}
