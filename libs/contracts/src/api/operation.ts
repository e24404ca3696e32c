// What an operation of the public API is, the errors families of operations share, and the builders the
// catalog (operations.ts and its family files) is written with.
import type { z } from 'zod';
import type { ErrorName } from '../errors.ts';
import * as rq from './requests.ts';

/** The tag of each family of routes, as the reference page groups them. */
export const FAMILIES = [
  'Emails',
  'Receiving Emails',
  'Domains',
  'API Keys',
  'Logs',
  'Templates',
  'Contacts',
  'Contact Imports',
  'Contact Properties',
  'Segments',
  'Audiences',
  'Topics',
  'Broadcasts',
  'Suppressions',
  'Reputation',
  'Deliverability',
  'Development Inbox',
  'Webhooks',
  'Public Links',
  'Signup Forms',
  'SMTP Relay',
  'Dashboard',
] as const;
export type Family = (typeof FAMILIES)[number];

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** An error an operation can answer: its name, with the status when it is not the name's usual one. */
export type OperationError = ErrorName | `${ErrorName}@${number}`;

export type Operation = {
  method: HttpMethod;
  /** OpenAPI path template, `/emails/{email_id}`. */
  path: string;
  tag: Family;
  summary: string;
  /**
   * `api_key`: a bearer API key; `none`: a public link, its signed token is the credential; `session`: the
   * dashboard's session cookie; `sign_in`: a dashboard route used without a session (signing in, the first
   * account's setup, following an invite or reset link), where a password or a link's token is the credential.
   */
  auth: 'api_key' | 'none' | 'session' | 'sign_in';
  /** A `session` operation that wants the session's CSRF token in `x-csrf-token`. */
  csrf?: boolean;
  /** Why this operation is Postline's own (absent from Resend's API); marked `x-postline` in the document. */
  extension?: string;
  deprecated?: boolean;
  /** Takes an `Idempotency-Key` header. */
  idempotent?: boolean;
  /** Callable with a `sending_access` key (so never answers `restricted_api_key`). */
  sendingAccess?: boolean;
  /** Not counted by the rate limit: never answers `rate_limit_exceeded`, and carries no rate-limit headers. */
  rateLimitExempt?: boolean;
  query?: z.ZodObject;
  body?: { schema: z.ZodType; contentType?: string; required?: boolean; alternative?: string };
  success: {
    status: number;
    /** JSON unless `contentType` says otherwise. */
    schema?: z.ZodType;
    contentType?: string;
    description?: string;
    headers?: Record<string, string>;
    /** Other success statuses answering the same body, with what each means. */
    also?: { status: number; description: string }[];
  };
  /** Error names this operation may answer beyond the ones every keyed operation shares. */
  errors: OperationError[];
  /** Documented path parameter descriptions. */
  params?: Record<string, string>;
};

/** The usual status of each error name. */
export const ERROR_STATUS: Record<ErrorName, number> = {
  invalid_idempotency_key: 400,
  validation_error: 422,
  missing_api_key: 401,
  restricted_api_key: 401,
  invalid_api_key: 403,
  email_above_quota: 403,
  invalid_permission: 403,
  suspended_api_key: 403,
  not_found: 404,
  method_not_allowed: 405,
  concurrent_idempotent_requests: 409,
  invalid_idempotent_request: 409,
  resource_locked: 409,
  invalid_attachment: 422,
  invalid_from_address: 422,
  invalid_access: 422,
  invalid_parameter: 422,
  invalid_region: 422,
  missing_required_field: 422,
  missing_required_parameter: 422,
  daily_quota_exceeded: 429,
  monthly_quota_exceeded: 429,
  rate_limit_exceeded: 429,
  security_error: 451,
  application_error: 500,
  internal_server_error: 500,
  service_unavailable: 503,
  invalid_credentials: 401,
  invalid_session: 401,
  invalid_csrf_token: 403,
  team_access_disabled: 403,
  broadcast_review_failed: 422,
  sending_paused: 403,
};

/**
 * What every operation behind an API key may answer: no key, a bad or disabled key, the rate limit, a fault
 * (narrowed per operation by answerableShared).
 */
export const KEYED_ERRORS: OperationError[] = [
  // A path parameter that is not valid percent-encoding.
  'validation_error@400',
  'missing_api_key',
  'restricted_api_key',
  'invalid_api_key',
  'rate_limit_exceeded',
  'application_error',
  'service_unavailable',
  // A dashboard session instead of a key: unknown or expired, without its CSRF token, its team disabled, or
  // its user no longer a member (or a member, not an admin, on the API keys).
  'invalid_session',
  'invalid_csrf_token',
  'team_access_disabled',
  'invalid_permission',
];

/** What every dashboard operation with a session may answer: no live session, no CSRF token or another site, a fault. */
export const SESSION_ERRORS: OperationError[] = [
  'validation_error@400',
  'invalid_session',
  'invalid_csrf_token',
  'application_error',
  'service_unavailable',
];

/** What every dashboard operation without a session may answer: a request from another site, a fault. */
export const SIGN_IN_ERRORS: OperationError[] = [
  'validation_error@400',
  'invalid_csrf_token',
  'application_error',
  'service_unavailable',
];

/** What every operation that takes a body may answer: not JSON, too large, an encoding it cannot read. */
export const BODY_ERRORS: OperationError[] = ['validation_error@400', 'validation_error@413', 'validation_error@415'];

export const LIST_ERRORS: OperationError[] = ['validation_error'];

/**
 * Whether an operation can answer one of the errors its family of operations shares: a path without
 * parameters has none badly percent-encoded, a `sending_access` key is never restricted from a sending
 * route, and a route the rate limit does not count is never limited.
 */
export function answerableShared(op: Operation, error: OperationError): boolean {
  if (error === 'validation_error@400') return op.path.includes('{');
  if (error === 'restricted_api_key') return op.sendingAccess !== true;
  if (error === 'rate_limit_exceeded') return op.rateLimitExempt !== true;
  return true;
}
export const json = (schema: z.ZodType) => ({ schema });

type OperationFields = Omit<Operation, 'method' | 'path' | 'tag' | 'summary' | 'auth'>;

/** The builder of one method's keyed operations: `get(path, tag, summary, { success, errors, … })`. */
const keyed =
  (method: HttpMethod) =>
  (path: string, tag: Family, summary: string, rest: OperationFields): Operation => ({
    method,
    path,
    tag,
    summary,
    auth: 'api_key',
    ...rest,
  });
export const get = keyed('get');
export const post = keyed('post');
export const patch = keyed('patch');
export const del = keyed('delete');
export const ok = (schema: z.ZodType) => ({ status: 200, schema });
export const created = (schema: z.ZodType) => ({ status: 201, schema });

/** The standard list operation of a family: keyset pagination, the list envelope. */
export function list(
  path: string,
  tag: Family,
  summary: string,
  schema: z.ZodType,
  extra: Partial<Operation> = {},
): Operation {
  return get(path, tag, summary, { query: rq.PaginationQuery, success: ok(schema), errors: LIST_ERRORS, ...extra });
}
