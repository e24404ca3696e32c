// Random requests to the gateway: any method, path, query, headers and body, or a valid request of a route
// family with one field dropped, replaced or added.
import fc from 'fast-check';
import { FAMILIES, FIELDS, PUBLIC, SUB_ROUTES, TEMPLATES } from './vocabulary.ts';

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
