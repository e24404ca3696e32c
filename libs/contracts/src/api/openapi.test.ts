import { describe, expect, it } from '@jest/globals';
import { PUBLIC_EVENT_TYPES } from '../events.ts';
import { errorsByStatus, EXTENSION_KEY, openApiDocument, operationId } from './openapi.ts';
import { FAMILIES, OPERATIONS } from './operations.ts';

type Json = Record<string, unknown>;
const doc = openApiDocument();
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method, op: op as Json })),
);

/** A schema that says something: a type, a constant, properties, items or variants. */
function isEmpty(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return true;
  const s = schema as Json;
  return !['type', 'const', 'enum', 'properties', 'items', 'anyOf', 'oneOf', 'allOf', '$ref'].some((k) => k in s);
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with one operation per catalog entry, each with a unique operationId', () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(operations).toHaveLength(OPERATIONS.length);
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operationId({ method: 'get', path: '/emails/{email_id}/attachments' })).toBe(
      'getEmailsByEmailIdAttachments',
    );
  });

  it('gives every family operations, and every operation a family', () => {
    for (const family of FAMILIES) expect(operations.some(({ op }) => (op.tags as string[])[0] === family)).toBe(true);
  });

  it('has no empty schema: request bodies, JSON responses, parameters', () => {
    const empty: string[] = [];
    for (const { path, method, op } of operations) {
      const where = `${method.toUpperCase()} ${path}`;
      const body = (op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
      for (const [type, media] of Object.entries(body ?? {}))
        if (isEmpty(media.schema)) empty.push(`${where} body ${type}`);
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        const content = (response.content ?? {}) as Record<string, { schema?: unknown }>;
        for (const [type, media] of Object.entries(content)) {
          if (isEmpty(media.schema)) empty.push(`${where} ${status} ${type}`);
        }
      }
      for (const parameter of (op.parameters ?? []) as Json[]) {
        if (isEmpty(parameter.schema)) empty.push(`${where} parameter ${String(parameter.name)}`);
      }
    }
    expect(empty).toEqual([]);
  });

  it('answers errors as { statusCode, name, message } with the names of each status', () => {
    const op = doc.paths['/domains']?.post as { responses: Record<string, { content: Json }> };
    const schema = (op.responses['422']?.content['application/json'] as { schema: Json }).schema;
    expect(schema.required).toEqual(['statusCode', 'name', 'message']);
    expect((schema.properties as Record<string, Json>).name?.enum).toEqual([
      'validation_error',
      'missing_required_field',
      'invalid_region',
    ]);
  });

  it('secures keyed operations with a bearer key, the dashboard’s with its session cookie, and leaves links open', () => {
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const schemes = doc.components.securitySchemes as Json;
    expect(schemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: '__Host-postline_session' });
    expect(schemes.csrfToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-csrf-token' });
    const expected = (operation: (typeof OPERATIONS)[number]) => {
      if (operation.auth === 'none' || operation.auth === 'sign_in') return [];
      if (operation.auth === 'session') {
        return [operation.csrf ? { sessionCookie: [], csrfToken: [] } : { sessionCookie: [] }];
      }
      return undefined;
    };
    for (const operation of OPERATIONS) {
      const op = doc.paths[operation.path]?.[operation.method] as Json;
      expect(op.security).toEqual(expected(operation));
      if (operation.auth === 'session' || operation.auth === 'sign_in') {
        expect(operation.path.startsWith('/dashboard-api/')).toBe(true);
      }
    }
    const signIn = doc.paths['/dashboard-api/session']?.post as { responses: Record<string, { content: Json }> };
    const names = (status: string) =>
      ((signIn.responses[status]?.content['application/json'] as { schema: { properties: { name: Json } } }).schema
        .properties.name.enum as string[]) ?? [];
    expect(names('401')).toEqual(['invalid_credentials']);
    expect(names('403')).toEqual(expect.arrayContaining(['invalid_csrf_token', 'invalid_permission']));
    expect(names('403')).not.toContain('invalid_api_key');
  });

  it('documents a second success status with the same body where an operation has one', () => {
    const claim = doc.paths['/domains/claim']?.post as { responses: Record<string, { content: Json }> };
    expect(claim.responses['200']?.content).toEqual(claim.responses['201']?.content);
  });

  it('documents the Idempotency-Key header where it is taken and the rate-limit headers on keyed answers', () => {
    const send = doc.paths['/emails']?.post as { parameters: Json[]; responses: Record<string, Json> };
    expect(send.parameters.map((p) => p.name)).toContain('Idempotency-Key');
    expect(Object.keys(send.responses['200']?.headers as Json)).toEqual(
      expect.arrayContaining(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'idempotent-replayed']),
    );
    expect(Object.keys(send.responses['429']?.headers as Json)).toEqual(['retry-after']);
    const list = doc.paths['/domains']?.get as { parameters: Json[] };
    expect(list.parameters.map((p) => p.name)).not.toContain('Idempotency-Key');
  });

  it('marks what is Postline’s own', () => {
    for (const operation of OPERATIONS) {
      const op = doc.paths[operation.path]?.[operation.method] as Json;
      expect(op[EXTENSION_KEY]).toBe(operation.extension ? true : undefined);
    }
  });

  it('has a webhook for each of the 19 events, with its payload and the three signature headers', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...PUBLIC_EVENT_TYPES].sort());
    expect(PUBLIC_EVENT_TYPES).toHaveLength(19);
    for (const type of PUBLIC_EVENT_TYPES) {
      const post = doc.webhooks[type]?.post as { parameters: Json[]; requestBody: { content: Record<string, Json> } };
      expect(post.parameters.map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
      const schema = post.requestBody.content['application/json']?.schema as { properties: Record<string, Json> };
      expect(schema.properties.type).toEqual({ type: 'string', const: type });
      expect(isEmpty(schema.properties.data)).toBe(false);
    }
  });
});

describe('the errors an operation documents', () => {
  const names = (method: string, path: string) => {
    const op = OPERATIONS.find((o) => o.method === method && o.path === path);
    if (!op) throw new Error(`no ${method} ${path}`);
    return [...errorsByStatus(op)].flatMap(([status, list]) => list.map((name) => `${name}@${status}`));
  };

  it('leave out the shared ones the operation cannot answer', () => {
    // No path parameter to be badly percent-encoded, and no body.
    expect(names('get', '/emails')).not.toContain('validation_error@400');
    expect(names('get', '/emails/{email_id}')).toContain('validation_error@400');
    // A sending_access key may send: restricted only elsewhere.
    expect(names('post', '/emails')).not.toContain('restricted_api_key@401');
    expect(names('get', '/domains')).toContain('restricted_api_key@401');
    // The relay's key check is not rate limited.
    expect(names('get', '/relay/credentials')).not.toContain('rate_limit_exceeded@429');
    expect(names('post', '/emails/batch')).not.toContain('invalid_attachment@422');
  });
});
