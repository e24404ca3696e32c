import { z } from 'zod';
import { ErrorBody, type ErrorName } from '../errors.ts';
import { PUBLIC_EVENT_TYPES, publicEvents } from '../events.ts';
import {
  BODY_ERRORS,
  ERROR_STATUS,
  FAMILIES,
  KEYED_ERRORS,
  OPERATIONS,
  answerableShared,
  SESSION_ERRORS,
  SIGN_IN_ERRORS,
  type Operation,
  type OperationError,
} from './operations.ts';

type JsonSchema = Record<string, unknown>;
export type OpenApiDocument = {
  openapi: '3.1.1';
  info: Record<string, unknown>;
  paths: Record<string, Record<string, JsonSchema>>;
  webhooks: Record<string, Record<string, JsonSchema>>;
  components: Record<string, Record<string, unknown>>;
} & Record<string, unknown>;

/** The document's version: it changes when the API does. */
export const API_VERSION = '1.0.0';

/** The marker of what Postline serves and Resend's API does not. */
export const EXTENSION_KEY = 'x-postline';

/**
 * The JSON Schema (2020-12, as OpenAPI 3.1 uses) of a zod schema: `input` for what a request may carry,
 * `output` for what a response holds. Transforms and refinements are not represented (what they accept is
 * a subset of the base type's).
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    target: 'draft-2020-12',
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

const RATE_LIMIT_HEADERS: Record<string, { description: string; schema: JsonSchema }> = {
  'ratelimit-limit': { description: 'Requests allowed per window (per team).', schema: { type: 'integer' } },
  'ratelimit-remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'ratelimit-reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
  'ratelimit-policy': { description: 'The policy, `<limit>;w=<window seconds>`.', schema: { type: 'string' } },
};

const RATE_LIMIT_REFS = Object.fromEntries(
  Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
);

const SIGNATURE_HEADERS: { name: string; description: string }[] = [
  { name: 'webhook-id', description: 'The id of the event delivery; the same on every retry of it.' },
  { name: 'webhook-timestamp', description: 'Unix seconds when this attempt was signed.' },
  {
    name: 'webhook-signature',
    description:
      'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `<webhook-id>.<webhook-timestamp>.<body>` with the ' +
      "webhook's signing secret (Standard Webhooks).",
  },
];

/** The status and name of an operation's error. */
export function errorStatus(error: OperationError): { name: ErrorName; status: number } {
  const [name, status] = error.split('@') as [ErrorName, string | undefined];
  return { name, status: status === undefined ? ERROR_STATUS[name] : Number(status) };
}

/** Every error an operation may answer, by status (the keyed ones included). */
export function errorsByStatus(op: Operation): Map<number, ErrorName[]> {
  const shared: OperationError[] = [
    ...(op.auth === 'api_key' ? KEYED_ERRORS : []),
    ...(op.auth === 'session' ? SESSION_ERRORS : []),
    ...(op.auth === 'sign_in' ? SIGN_IN_ERRORS : []),
  ].filter((error) => answerableShared(op, error));
  const all = [...shared, ...(op.body ? BODY_ERRORS : []), ...op.errors, 'method_not_allowed' as const];
  const byStatus = new Map<number, ErrorName[]>();
  for (const error of all) {
    const { name, status } = errorStatus(error);
    const names = byStatus.get(status) ?? [];
    if (!names.includes(name)) names.push(name);
    byStatus.set(status, names);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

/** Path parameters of a template, in order: `/emails/{email_id}` → `['email_id']`. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

/** The operationId: `get /emails/{email_id}/attachments` → `getEmailsByEmailIdAttachments`. */
export function operationId(op: Pick<Operation, 'method' | 'path'>): string {
  const words = op.path
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      return param ? ['by', ...param[1]!.split('_')] : segment.split(/[-_]/);
    });
  return op.method + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

function parametersOf(op: Operation): JsonSchema[] {
  const params: JsonSchema[] = pathParams(op.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
    ...(op.params?.[name] ? { description: op.params[name] } : {}),
  }));
  if (op.query) {
    const schema = jsonSchemaOf(op.query, 'input');
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = (schema.required ?? []) as string[];
    for (const [name, property] of Object.entries(properties)) {
      const { description, ...rest } = property;
      params.push({
        name,
        in: 'query',
        required: required.includes(name),
        schema: rest,
        ...(description ? { description } : {}),
      });
    }
  }
  if (op.idempotent) {
    params.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 256 },
      description:
        'The same key with the same body within 24 hours gets the first answer (with `idempotent-replayed: true`) ' +
        'instead of sending again.',
    });
  }
  if (op.path === '/emails/batch') {
    params.push({
      name: 'x-batch-validation',
      in: 'header',
      required: false,
      schema: { type: 'string', enum: ['strict', 'permissive'], default: 'strict' },
      description: '`strict` refuses the batch on any invalid item; `permissive` sends the valid ones.',
    });
  }
  return params;
}

function requestBodyOf(op: Operation): JsonSchema | undefined {
  if (!op.body) return undefined;
  const content: Record<string, JsonSchema> = {
    [op.body.contentType ?? 'application/json']: { schema: jsonSchemaOf(op.body.schema, 'input') },
  };
  if (op.body.alternative === 'message/rfc822') {
    content['message/rfc822'] = {
      schema: { type: 'string', description: 'A whole MIME message (the SMTP relay submits this way).' },
    };
  }
  return { required: op.body.required ?? false, content };
}

function responsesOf(op: Operation): JsonSchema {
  const { success } = op;
  const headers: Record<string, JsonSchema> = {
    ...(op.auth === 'api_key' && op.rateLimitExempt !== true ? RATE_LIMIT_REFS : {}),
    ...Object.fromEntries(
      Object.entries(success.headers ?? {}).map(([name, description]) => [
        name,
        { description, schema: { type: 'string' } },
      ]),
    ),
    ...(op.idempotent
      ? { 'idempotent-replayed': { description: '`true` when this is a stored answer.', schema: { type: 'string' } } }
      : {}),
  };
  const content = success.schema
    ? { content: { 'application/json': { schema: jsonSchemaOf(success.schema, 'output') } } }
    : success.contentType
      ? { content: { [success.contentType]: { schema: { type: 'string', contentMediaType: success.contentType } } } }
      : {};
  const responses: Record<string, JsonSchema> = {
    [String(success.status)]: {
      description: success.description ?? 'OK',
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...content,
    },
  };
  for (const also of success.also ?? []) {
    responses[String(also.status)] = {
      description: also.description,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...content,
    };
  }
  for (const [status, names] of errorsByStatus(op)) {
    responses[String(status)] = {
      description: names.map((name) => `\`${name}\``).join(', '),
      ...(status === 429 ? { headers: { 'retry-after': { $ref: '#/components/headers/retry-after' } } } : {}),
      content: { 'application/json': { schema: errorSchema(names) } },
    };
  }
  return responses;
}

function errorSchema(names: ErrorName[]): JsonSchema {
  return {
    type: 'object',
    properties: {
      statusCode: { type: 'integer' },
      name: { type: 'string', enum: names },
      message: { type: 'string' },
    },
    required: ['statusCode', 'name', 'message'],
    additionalProperties: false,
  };
}

function operationObject(op: Operation): JsonSchema {
  const parameters = parametersOf(op);
  const requestBody = requestBodyOf(op);
  return {
    operationId: operationId(op),
    tags: [op.tag],
    summary: op.summary,
    ...(op.extension ? { description: `Postline extension: ${op.extension}`, [EXTENSION_KEY]: true } : {}),
    ...(op.deprecated ? { deprecated: true } : {}),
    ...(op.auth === 'none' || op.auth === 'sign_in' ? { security: [] } : {}),
    ...(op.auth === 'session'
      ? { security: [op.csrf ? { sessionCookie: [], csrfToken: [] } : { sessionCookie: [] }] }
      : {}),
    ...(op.sendingAccess ? { 'x-postline-sending-access': true } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: responsesOf(op),
  };
}

function webhookObject(type: (typeof PUBLIC_EVENT_TYPES)[number]): Record<string, JsonSchema> {
  const body = z.object({
    type: z.literal(type),
    created_at: z.string().describe('ISO 8601: when the event happened.'),
    data: publicEvents[type],
  });
  return {
    post: {
      operationId: `event${type
        .split(/[._]/)
        .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
        .join('')}`,
      summary: type,
      tags: ['Webhooks'],
      parameters: SIGNATURE_HEADERS.map(({ name, description }) => ({
        name,
        in: 'header',
        required: true,
        schema: { type: 'string' },
        description,
      })),
      requestBody: { required: true, content: { 'application/json': { schema: jsonSchemaOf(body, 'output') } } },
      responses: { '200': { description: 'Any 2xx acknowledges the delivery; anything else is retried.' } },
    },
  };
}

let cached: OpenApiDocument | undefined;

/** The OpenAPI 3.1 document of the public API, built from OPERATIONS and the event contracts. */
export function openApiDocument(): OpenApiDocument {
  if (cached) return cached;
  const paths: OpenApiDocument['paths'] = {};
  for (const op of OPERATIONS) {
    (paths[op.path] ??= {})[op.method] = operationObject(op);
  }
  const document: OpenApiDocument = {
    openapi: '3.1.1',
    info: {
      title: 'Postline',
      version: API_VERSION,
      description:
        "Postline's HTTP API, wire-compatible with Resend's. Operations and fields marked `x-postline` (or described " +
        "as a Postline extension) are Postline's own. Every error answers `{ statusCode, name, message }`.",
    },
    servers: [{ url: '/', description: 'This server' }],
    security: [{ bearerAuth: [] }],
    tags: FAMILIES.map((name) => ({ name })),
    paths,
    webhooks: Object.fromEntries(PUBLIC_EVENT_TYPES.map((type) => [type, webhookObject(type)])),
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer re_…`.' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: '__Host-postline_session',
          description: "The dashboard's session cookie, set by signing in.",
        },
        csrfToken: {
          type: 'apiKey',
          in: 'header',
          name: 'x-csrf-token',
          description:
            "The session's `csrf_token` (from `GET /dashboard-api/session`); a browser's `Origin` must be the dashboard's site.",
        },
      },
      headers: {
        ...RATE_LIMIT_HEADERS,
        'retry-after': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
      },
      schemas: { Error: jsonSchemaOf(ErrorBody, 'output') },
    },
  };
  cached = document;
  return document;
}
