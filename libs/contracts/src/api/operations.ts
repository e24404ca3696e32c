import type { z } from 'zod';
import type { ErrorName } from '../errors.ts';
import * as rq from './requests.ts';
import * as rs from './shapes.ts';

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
  'Webhooks',
  'Public Links',
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
  /** Callable with a `sending_access` key. */
  sendingAccess?: boolean;
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
};

/** What every operation behind an API key may answer: no key, a bad or disabled key, the rate limit, a fault. */
export const KEYED_ERRORS: OperationError[] = [
  // A path that is not valid percent-encoding.
  'validation_error@400',
  'missing_api_key',
  'restricted_api_key',
  'invalid_api_key',
  'rate_limit_exceeded',
  'application_error',
  'service_unavailable',
  // A dashboard session instead of a key: unknown or expired, without its CSRF token, or its team disabled.
  'invalid_session',
  'invalid_csrf_token',
  'team_access_disabled',
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

const LIST_ERRORS: OperationError[] = ['validation_error'];
const json = (schema: z.ZodType) => ({ schema });

const get = (
  path: string,
  tag: Family,
  summary: string,
  rest: Omit<Operation, 'method' | 'path' | 'tag' | 'summary' | 'auth'>,
): Operation => ({
  method: 'get',
  path,
  tag,
  summary,
  auth: 'api_key',
  ...rest,
});
const post = (
  path: string,
  tag: Family,
  summary: string,
  rest: Omit<Operation, 'method' | 'path' | 'tag' | 'summary' | 'auth'>,
): Operation => ({
  ...get(path, tag, summary, rest),
  method: 'post',
});
const patch = (
  path: string,
  tag: Family,
  summary: string,
  rest: Omit<Operation, 'method' | 'path' | 'tag' | 'summary' | 'auth'>,
): Operation => ({
  ...get(path, tag, summary, rest),
  method: 'patch',
});
const del = (
  path: string,
  tag: Family,
  summary: string,
  rest: Omit<Operation, 'method' | 'path' | 'tag' | 'summary' | 'auth'>,
): Operation => ({
  ...get(path, tag, summary, rest),
  method: 'delete',
});
const ok = (schema: z.ZodType) => ({ status: 200, schema });
const created = (schema: z.ZodType) => ({ status: 201, schema });

/** The standard list operation of a family: keyset pagination, the list envelope. */
function list(
  path: string,
  tag: Family,
  summary: string,
  schema: z.ZodType,
  extra: Partial<Operation> = {},
): Operation {
  return get(path, tag, summary, { query: rq.PaginationQuery, success: ok(schema), errors: LIST_ERRORS, ...extra });
}

const SEND_ERRORS: OperationError[] = [
  'validation_error',
  'missing_required_field',
  'invalid_from_address',
  'invalid_attachment',
  'invalid_parameter',
  'validation_error@403',
  'validation_error@413',
  'not_found',
  'invalid_idempotency_key',
  'concurrent_idempotent_requests',
  'invalid_idempotent_request',
];

/**
 * Every route of the public API, the one source of the OpenAPI document: the owners' routers are checked
 * against it (every mounted route is here, every operation here is mounted), and the integration tests
 * validate every response they receive against it.
 */
export const OPERATIONS: readonly Operation[] = [
  // ---- Emails ----
  post('/emails', 'Emails', 'Send an email', {
    idempotent: true,
    sendingAccess: true,
    body: {
      schema: rq.SendEmailBody,
      required: true,
      alternative: 'message/rfc822',
    },
    success: ok(rs.SendEmailResponse),
    errors: SEND_ERRORS,
  }),
  list('/emails', 'Emails', 'List sent emails', rs.EmailList),
  post('/emails/batch', 'Emails', 'Send up to 100 emails at once', {
    idempotent: true,
    sendingAccess: true,
    body: { schema: rq.BatchEmailsBody, required: true },
    success: ok(rs.BatchEmailsResponse),
    errors: SEND_ERRORS,
  }),
  get('/emails/metrics', 'Emails', 'Email metrics (not available)', {
    extension: 'Reserved so that `metrics` is not read as an email id; answers 404 until metrics are served.',
    success: { status: 200, schema: rs.SendEmailResponse, description: 'Never answered: metrics are not served yet.' },
    errors: ['not_found'],
  }),
  get('/emails/{email_id}', 'Emails', 'Retrieve an email', { success: ok(rs.Email), errors: ['not_found'] }),
  patch('/emails/{email_id}', 'Emails', 'Reschedule a scheduled email', {
    body: json(rq.RescheduleEmailBody),
    success: ok(rs.ref('email')),
    errors: ['not_found', 'validation_error', 'missing_required_field', 'validation_error@403'],
  }),
  post('/emails/{email_id}/cancel', 'Emails', 'Cancel a scheduled email', {
    success: ok(rs.ref('email')),
    errors: ['not_found', 'validation_error', 'validation_error@403'],
  }),
  list('/emails/{email_id}/attachments', 'Emails', "List a sent email's attachments", rs.AttachmentList, {
    errors: ['not_found', 'validation_error'],
  }),
  get('/emails/{email_id}/attachments/{attachment_id}', 'Emails', "Retrieve a sent email's attachment", {
    success: ok(rs.Attachment),
    errors: ['not_found'],
  }),
  post('/emails/{email_id}/share', 'Emails', 'Create a share link of a sent email', {
    body: json(rq.ShareEmailBody),
    success: ok(rs.ShareEmailResponse),
    errors: ['not_found', 'validation_error'],
  }),

  // ---- Receiving ----
  list('/emails/receiving', 'Receiving Emails', 'List received emails', rs.ReceivedEmailList),
  get('/emails/receiving/{email_id}', 'Receiving Emails', 'Retrieve a received email', {
    query: rq.ReceivedEmailQuery,
    success: ok(rs.ReceivedEmail),
    errors: ['not_found', 'validation_error'],
  }),
  list(
    '/emails/receiving/{email_id}/attachments',
    'Receiving Emails',
    "List a received email's attachments",
    rs.AttachmentList,
    { errors: ['not_found', 'validation_error'] },
  ),
  get(
    '/emails/receiving/{email_id}/attachments/{attachment_id}',
    'Receiving Emails',
    "Retrieve a received email's attachment",
    {
      success: ok(rs.Attachment),
      errors: ['not_found'],
    },
  ),

  // ---- Domains ----
  post('/domains', 'Domains', 'Create a domain', {
    body: { schema: rq.CreateDomainBody, required: true },
    success: created(rs.CreatedDomain),
    // 403: the domain is already registered.
    errors: ['validation_error', 'validation_error@403', 'missing_required_field', 'invalid_region'],
  }),
  list('/domains', 'Domains', 'List domains', rs.DomainList),
  get('/domains/{domain_id}', 'Domains', 'Retrieve a domain', { success: ok(rs.Domain), errors: ['not_found'] }),
  patch('/domains/{domain_id}', 'Domains', 'Update a domain', {
    body: json(rq.UpdateDomainBody),
    success: ok(rs.ref('domain')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/domains/{domain_id}', 'Domains', 'Delete a domain', {
    success: ok(rs.deleted('domain')),
    errors: ['not_found'],
  }),
  post('/domains/{domain_id}/verify', 'Domains', 'Verify a domain', {
    success: ok(rs.ref('domain')),
    errors: ['not_found'],
  }),
  post('/domains/claim', 'Domains', 'Claim a domain another team registered', {
    body: { schema: rq.ClaimDomainBody, required: true },
    success: {
      ...created(rs.DomainClaim),
      description: 'A new claim.',
      also: [{ status: 200, description: 'The pending claim of the same request.' }],
    },
    // 422: a name no other team has, the team's own, or a bad name.
    errors: ['validation_error', 'missing_required_field', 'invalid_region'],
  }),
  get('/domains/{domain_id}/claim', 'Domains', 'Retrieve a domain claim', {
    success: ok(rs.DomainClaim),
    errors: ['not_found'],
  }),
  post('/domains/{domain_id}/claim/verify', 'Domains', 'Verify a domain claim', {
    success: ok(rs.DomainClaim),
    errors: ['not_found'],
  }),

  // ---- API keys ----
  post('/api-keys', 'API Keys', 'Create an API key', {
    body: { schema: rq.CreateApiKeyBody, required: true },
    success: created(rs.CreatedApiKey),
    errors: ['validation_error', 'missing_required_field', 'invalid_access', 'not_found'],
  }),
  list('/api-keys', 'API Keys', 'List API keys', rs.ApiKeyList),
  patch('/api-keys/{api_key_id}', 'API Keys', 'Rename an API key', {
    body: { schema: rq.UpdateApiKeyBody, required: true },
    success: ok(rs.ref('api_key')),
    errors: ['not_found', 'validation_error', 'missing_required_field'],
  }),
  del('/api-keys/{api_key_id}', 'API Keys', 'Delete an API key', {
    success: ok(rs.deleted('api_key')),
    errors: ['not_found'],
  }),

  // ---- Logs ----
  list('/logs', 'Logs', 'List request logs', rs.LogList),
  get('/logs/{log_id}', 'Logs', 'Retrieve a request log', {
    success: ok(rs.Log),
    errors: ['not_found', 'validation_error'],
  }),

  // ---- Templates ----
  post('/templates', 'Templates', 'Create a template', {
    body: { schema: rq.CreateTemplateBody, required: true },
    success: created(rs.TemplateRef),
    errors: ['validation_error', 'missing_required_field'],
  }),
  list('/templates', 'Templates', 'List templates', rs.TemplateList),
  get('/templates/{id}', 'Templates', 'Retrieve a template', {
    params: { id: 'The template id or alias.' },
    success: ok(rs.Template),
    errors: ['not_found'],
  }),
  patch('/templates/{id}', 'Templates', 'Update a template', {
    params: { id: 'The template id or alias.' },
    body: json(rq.UpdateTemplateBody),
    success: ok(rs.TemplateRef),
    errors: ['not_found', 'validation_error'],
  }),
  del('/templates/{id}', 'Templates', 'Delete a template', {
    params: { id: 'The template id or alias.' },
    success: ok(rs.deleted('template')),
    errors: ['not_found'],
  }),
  post('/templates/{id}/publish', 'Templates', 'Publish a template', {
    params: { id: 'The template id or alias.' },
    success: ok(rs.TemplateRef),
    errors: ['not_found', 'validation_error'],
  }),
  post('/templates/{id}/duplicate', 'Templates', 'Duplicate a template', {
    params: { id: 'The template id or alias.' },
    success: ok(rs.TemplateRef),
    errors: ['not_found'],
  }),

  // ---- Contacts ----
  post('/contacts', 'Contacts', 'Create a contact', {
    body: { schema: rq.CreateContactBody, required: true },
    success: created(rs.ref('contact')),
    errors: ['validation_error', 'missing_required_field', 'not_found'],
  }),
  list('/contacts', 'Contacts', 'List contacts', rs.ContactList, {
    query: rq.PaginationQuery.safeExtend(rq.ContactListQuery.shape),
    errors: ['validation_error', 'not_found'],
  }),
  get('/contacts/{id}', 'Contacts', 'Retrieve a contact', {
    params: { id: 'The contact id or email address.' },
    success: ok(rs.Contact),
    errors: ['not_found'],
  }),
  patch('/contacts/{id}', 'Contacts', 'Update a contact', {
    params: { id: 'The contact id or email address.' },
    body: json(rq.UpdateContactBody),
    success: ok(rs.ref('contact')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/contacts/{id}', 'Contacts', 'Delete a contact', {
    params: { id: 'The contact id or email address.' },
    success: ok(rs.DeletedContact),
    errors: ['not_found'],
  }),
  list('/contacts/{contact_id}/segments', 'Contacts', "List a contact's segments", rs.SegmentList, {
    errors: ['not_found', 'validation_error'],
  }),
  post('/contacts/{contact_id}/segments/{segment_id}', 'Contacts', 'Add a contact to a segment', {
    success: ok(rs.ContactSegmentAdded),
    errors: ['not_found'],
  }),
  del('/contacts/{contact_id}/segments/{segment_id}', 'Contacts', 'Remove a contact from a segment', {
    success: ok(rs.ContactSegmentRemoved),
    errors: ['not_found'],
  }),
  list('/contacts/{contact_id}/topics', 'Contacts', "List a contact's topic subscriptions", rs.ContactTopicList, {
    errors: ['not_found', 'validation_error'],
  }),
  patch('/contacts/{contact_id}/topics', 'Contacts', "Update a contact's topic subscriptions", {
    body: { schema: rq.UpdateContactTopicsBody, required: true },
    success: ok(rs.ref('contact_topics')),
    errors: ['not_found', 'validation_error', 'missing_required_field'],
  }),

  // ---- Contact imports ----
  post('/contacts/imports', 'Contact Imports', 'Import contacts from a CSV file', {
    body: { schema: rq.ContactImportForm, contentType: 'multipart/form-data', required: true },
    success: created(rs.ref('contact_import')),
    errors: ['validation_error', 'validation_error@400', 'validation_error@413', 'missing_required_field', 'not_found'],
  }),
  list('/contacts/imports', 'Contact Imports', 'List contact imports', rs.ContactImportList, {
    query: rq.PaginationQuery.safeExtend(rq.ContactImportListQuery.shape),
  }),
  get('/contacts/imports/{id}', 'Contact Imports', 'Retrieve a contact import', {
    success: ok(rs.ContactImport),
    errors: ['not_found'],
  }),

  // ---- Contact properties ----
  post('/contact-properties', 'Contact Properties', 'Create a contact property', {
    body: { schema: rq.CreateContactPropertyBody, required: true },
    success: created(rs.ref('contact_property')),
    errors: ['validation_error', 'missing_required_field'],
  }),
  list('/contact-properties', 'Contact Properties', 'List contact properties', rs.ContactPropertyList),
  get('/contact-properties/{id}', 'Contact Properties', 'Retrieve a contact property', {
    success: ok(rs.ContactProperty),
    errors: ['not_found'],
  }),
  patch('/contact-properties/{id}', 'Contact Properties', 'Update a contact property', {
    body: json(rq.UpdateContactPropertyBody),
    success: ok(rs.ref('contact_property')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/contact-properties/{id}', 'Contact Properties', 'Delete a contact property', {
    success: ok(rs.deleted('contact_property')),
    errors: ['not_found'],
  }),

  // ---- Segments and their deprecated name, audiences ----
  ...(['Segments', 'Audiences'] as const).flatMap((tag) => {
    const base = tag === 'Segments' ? '/segments' : '/audiences';
    const object = tag === 'Segments' ? 'segment' : 'audience';
    const deprecated = tag === 'Audiences';
    return [
      post(base, tag, `Create ${tag === 'Segments' ? 'a segment' : 'an audience'}`, {
        deprecated,
        body: { schema: rq.CreateSegmentBody, required: true },
        success: created(rs.createdSegment(object)),
        errors: ['validation_error', 'missing_required_field'],
      }),
      list(base, tag, `List ${tag.toLowerCase()}`, rs.SegmentList, { deprecated }),
      get(`${base}/{id}`, tag, `Retrieve ${tag === 'Segments' ? 'a segment' : 'an audience'}`, {
        deprecated,
        success: ok(rs.segment(object)),
        errors: ['not_found'],
      }),
      patch(`${base}/{id}`, tag, `Rename ${tag === 'Segments' ? 'a segment' : 'an audience'}`, {
        deprecated,
        extension: 'Renaming a segment is not in the published reference.',
        body: { schema: rq.RenameSegmentBody, required: true },
        success: ok(rs.ref(object)),
        errors: ['not_found', 'validation_error', 'missing_required_field'],
      }),
      del(`${base}/{id}`, tag, `Delete ${tag === 'Segments' ? 'a segment' : 'an audience'}`, {
        deprecated,
        success: ok(rs.deleted(object)),
        errors: ['not_found'],
      }),
      list(
        `${base}/{id}/contacts`,
        tag,
        `List the contacts of ${tag === 'Segments' ? 'a segment' : 'an audience'}`,
        rs.ContactList,
        {
          deprecated,
          errors: ['not_found', 'validation_error'],
        },
      ),
    ];
  }),
  post('/audiences/{id}/contacts', 'Audiences', 'Create a contact in an audience', {
    deprecated: true,
    body: { schema: rq.AudienceContactBody, required: true },
    success: created(rs.ref('contact')),
    errors: ['not_found', 'validation_error', 'missing_required_field'],
  }),
  get('/audiences/{id}/contacts/{contact_id}', 'Audiences', "Retrieve an audience's contact", {
    deprecated: true,
    params: { contact_id: 'The contact id or email address.' },
    success: ok(rs.Contact),
    errors: ['not_found'],
  }),
  patch('/audiences/{id}/contacts/{contact_id}', 'Audiences', "Update an audience's contact", {
    deprecated: true,
    params: { contact_id: 'The contact id or email address.' },
    body: json(rq.UpdateContactBody),
    success: ok(rs.ref('contact')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/audiences/{id}/contacts/{contact_id}', 'Audiences', 'Remove a contact from an audience', {
    deprecated: true,
    params: { contact_id: 'The contact id or email address.' },
    success: ok(rs.DeletedContact),
    errors: ['not_found'],
  }),

  // ---- Topics ----
  post('/topics', 'Topics', 'Create a topic', {
    body: { schema: rq.CreateTopicBody, required: true },
    success: created(rs.ref('topic')),
    errors: ['validation_error', 'missing_required_field'],
  }),
  list('/topics', 'Topics', 'List topics', rs.TopicList),
  get('/topics/{id}', 'Topics', 'Retrieve a topic', { success: ok(rs.Topic), errors: ['not_found'] }),
  patch('/topics/{id}', 'Topics', 'Update a topic', {
    body: json(rq.UpdateTopicBody),
    success: ok(rs.ref('topic')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/topics/{id}', 'Topics', 'Delete a topic', { success: ok(rs.deleted('topic')), errors: ['not_found'] }),

  // ---- Broadcasts ----
  post('/broadcasts', 'Broadcasts', 'Create a broadcast', {
    body: { schema: rq.CreateBroadcastBody, required: true },
    success: created(rs.ref('broadcast')),
    errors: [
      'validation_error',
      'missing_required_field',
      'not_found',
      'invalid_from_address',
      'invalid_parameter',
      'validation_error@403',
    ],
  }),
  list('/broadcasts', 'Broadcasts', 'List broadcasts', rs.BroadcastList),
  get('/broadcasts/{id}', 'Broadcasts', 'Retrieve a broadcast', { success: ok(rs.Broadcast), errors: ['not_found'] }),
  patch('/broadcasts/{id}', 'Broadcasts', 'Update a draft broadcast', {
    body: json(rq.UpdateBroadcastBody),
    success: ok(rs.ref('broadcast')),
    errors: ['not_found', 'validation_error', 'invalid_from_address', 'invalid_parameter', 'validation_error@403'],
  }),
  del('/broadcasts/{id}', 'Broadcasts', 'Delete a draft or scheduled broadcast', {
    success: ok(rs.deleted('broadcast')),
    errors: ['not_found', 'validation_error', 'validation_error@403'],
  }),
  post('/broadcasts/{id}/send', 'Broadcasts', 'Send or schedule a broadcast', {
    body: json(rq.SendBroadcastBody),
    success: ok(rs.SentBroadcast),
    errors: ['not_found', 'validation_error', 'invalid_from_address', 'invalid_parameter', 'validation_error@403'],
  }),
  post('/broadcasts/{id}/cancel', 'Broadcasts', 'Cancel a scheduled broadcast', {
    success: ok(rs.ref('broadcast')),
    errors: ['not_found', 'validation_error', 'validation_error@403'],
  }),
  get('/broadcasts/{id}/recipients', 'Broadcasts', "List a broadcast's recipients by outcome", {
    query: rq.PaginationQuery.safeExtend(rq.BroadcastRecipientsQuery.shape),
    success: ok(rs.BroadcastRecipientList),
    errors: ['not_found', 'validation_error', 'missing_required_parameter'],
  }),
  get('/broadcasts/{id}/clicked-links', 'Broadcasts', "List a broadcast's clicked links", {
    query: rq.BroadcastClickedLinksQuery,
    success: ok(rs.BroadcastClickedLinkList),
    errors: ['not_found', 'validation_error'],
  }),

  // ---- Suppressions ----
  post('/suppressions', 'Suppressions', 'Suppress an address', {
    body: { schema: rq.AddSuppressionBody, required: true },
    success: created(rs.ref('suppression')),
    errors: ['validation_error', 'missing_required_field'],
  }),
  list('/suppressions', 'Suppressions', 'List suppressions', rs.SuppressionList, {
    query: rq.PaginationQuery.safeExtend(rq.SuppressionListQuery.shape),
  }),
  post('/suppressions/batch/add', 'Suppressions', 'Suppress up to 100 addresses', {
    extension: 'Batch suppression is not in the published reference.',
    body: { schema: rq.BatchAddSuppressionsBody, required: true },
    success: created(rs.SuppressionBatchAdded),
    errors: ['validation_error', 'missing_required_field'],
  }),
  post('/suppressions/batch/remove', 'Suppressions', 'Remove up to 100 suppressions', {
    extension: 'Batch removal is not in the published reference.',
    body: { schema: rq.BatchRemoveSuppressionsBody, required: true },
    success: ok(rs.SuppressionBatchRemoved),
    errors: ['validation_error'],
  }),
  get('/suppressions/{id}', 'Suppressions', 'Retrieve a suppression', {
    params: { id: 'The suppression id or the suppressed address.' },
    success: ok(rs.Suppression),
    errors: ['not_found'],
  }),
  del('/suppressions/{id}', 'Suppressions', 'Remove a suppression', {
    params: { id: 'The suppression id or the suppressed address.' },
    success: ok(rs.deleted('suppression')),
    errors: ['not_found'],
  }),

  // ---- Webhooks ----
  post('/webhooks', 'Webhooks', 'Create a webhook', {
    body: { schema: rq.CreateWebhookBody, required: true },
    success: created(rs.WebhookSecret),
    errors: ['validation_error', 'missing_required_field'],
  }),
  list('/webhooks', 'Webhooks', 'List webhooks', rs.WebhookList),
  get('/webhooks/{webhook_id}', 'Webhooks', 'Retrieve a webhook', { success: ok(rs.Webhook), errors: ['not_found'] }),
  patch('/webhooks/{webhook_id}', 'Webhooks', 'Update a webhook', {
    body: json(rq.UpdateWebhookBody),
    success: ok(rs.ref('webhook')),
    errors: ['not_found', 'validation_error'],
  }),
  del('/webhooks/{webhook_id}', 'Webhooks', 'Delete a webhook', {
    success: ok(rs.deleted('webhook')),
    errors: ['not_found'],
  }),
  post('/webhooks/{webhook_id}/signing-secret/rotate', 'Webhooks', "Rotate a webhook's signing secret", {
    extension: 'Secret rotation is not in the published reference.',
    success: ok(rs.WebhookSecret),
    errors: ['not_found'],
  }),
  get('/webhooks/{webhook_id}/events', 'Webhooks', "List a webhook's events", {
    extension: 'Event history is not in the published reference.',
    query: rq.WebhookEventPageQuery,
    success: ok(rs.WebhookEventList),
    errors: ['not_found', 'validation_error'],
  }),
  get('/webhooks/{webhook_id}/events/{event_id}', 'Webhooks', "Retrieve a webhook's event", {
    extension: 'Event history is not in the published reference.',
    success: ok(rs.WebhookEvent),
    errors: ['not_found'],
  }),
  get('/webhooks/{webhook_id}/events/{event_id}/attempts', 'Webhooks', "List an event's delivery attempts", {
    extension: 'Event history is not in the published reference.',
    query: rq.WebhookAttemptPageQuery,
    success: ok(rs.WebhookAttemptList),
    errors: ['not_found', 'validation_error'],
  }),
  post('/webhooks/{webhook_id}/events/{event_id}/replay', 'Webhooks', 'Deliver an event again', {
    extension: 'Replay is not in the published reference.',
    success: ok(rs.ref('webhook_event')),
    errors: ['not_found'],
  }),

  // ---- SMTP relay ----
  get('/relay/credentials', 'SMTP Relay', "Check an API key (the SMTP relay's AUTH)", {
    extension: 'Used by the SMTP relay to check the API key a client gives at AUTH.',
    sendingAccess: true,
    success: ok(rs.RelayCredentials),
    errors: [],
  }),

  // ---- Public links (no API key: the signed token is the credential) ----
  ...publicLinks(),

  // ---- The dashboard's own routes (a session cookie, no API key) ----
  ...dashboardOperations(),
];

function publicLink(
  method: HttpMethod,
  path: string,
  summary: string,
  success: Operation['success'],
  extra: Partial<Operation> = {},
): Operation {
  return {
    method,
    path,
    tag: 'Public Links',
    summary,
    auth: 'none',
    extension: 'A link Postline issues and serves without an API key; the signed token names what it serves.',
    success,
    // A token not of the link's shape is no public link: the gateway asks for an API key.
    errors: ['not_found', 'missing_api_key', 'invalid_api_key', 'rate_limit_exceeded', 'service_unavailable'],
    params: { token: 'The signed token of the link.' },
    ...extra,
  };
}

function publicLinks(): Operation[] {
  const file = { status: 200, contentType: 'application/octet-stream', description: 'The file, as a download.' };
  return [
    publicLink('get', '/share/{token}', "A shared email's content", {
      status: 200,
      contentType: 'text/html',
      description: "The email's HTML (or its text), sandboxed.",
    }),
    publicLink('get', '/downloads/{token}', "Download a sent email's attachment", file),
    publicLink('get', '/inbound/{token}', "Download a received email's raw message or attachment", file),
    publicLink('get', '/o/{token}', 'Open-tracking pixel', {
      status: 200,
      contentType: 'image/gif',
      description: 'A 1×1 GIF; the open is recorded.',
    }),
    publicLink('get', '/c/{token}', 'Click-tracking redirect', {
      status: 302,
      description: 'A redirect to the link; the click is recorded.',
      headers: { location: 'The original link.' },
    }),
    publicLink('get', '/unsubscribe/{token}', "A broadcast recipient's preference page", {
      status: 200,
      contentType: 'text/html',
      description: 'The preference page: unsubscribe, or choose topics.',
    }),
    publicLink(
      'post',
      '/unsubscribe/{token}',
      'Unsubscribe (RFC 8058 one-click) or save the preference form',
      { status: 200, contentType: 'text/html', description: 'The preference page, updated.' },
      {
        body: { schema: rq.UnsubscribeForm, contentType: 'application/x-www-form-urlencoded' },
        errors: [
          'not_found',
          'missing_api_key',
          'invalid_api_key',
          'validation_error',
          'validation_error@413',
          'rate_limit_exceeded',
          'service_unavailable',
        ],
      },
    ),
  ];
}

function dashboard(
  method: HttpMethod,
  path: string,
  summary: string,
  auth: 'session' | 'csrf' | 'sign_in',
  rest: Pick<Operation, 'success' | 'errors'> & Partial<Operation>,
): Operation {
  return {
    method,
    path: `/dashboard-api${path}`,
    tag: 'Dashboard',
    summary,
    auth: auth === 'sign_in' ? 'sign_in' : 'session',
    ...(auth === 'csrf' ? { csrf: true } : {}),
    extension: 'The dashboard’s own route (a session cookie, not an API key), under `/dashboard-api`.',
    ...rest,
  };
}

function dashboardOperations(): Operation[] {
  // A session whose team's access is off, or an admin-only route for a member.
  const TEAM_ERRORS: OperationError[] = ['invalid_permission', 'team_access_disabled'];
  const signedIn = (description: string) => ({
    ...created(rs.DashboardSession),
    description,
    headers: { 'set-cookie': 'The session cookie, `__Host-postline_session`.' },
  });
  return [
    dashboard('post', '/session', 'Sign in', 'sign_in', {
      body: { schema: rq.SignInBody, required: true },
      success: signedIn('Signed in: the session.'),
      // 403: not a member of the team asked for; 429: too many attempts from the address or for the account.
      errors: [
        'validation_error',
        'missing_required_field',
        'invalid_credentials',
        'invalid_permission',
        'rate_limit_exceeded',
      ],
    }),
    dashboard('get', '/session', 'Retrieve the session (and its CSRF token)', 'session', {
      success: ok(rs.DashboardSession),
      errors: [],
    }),
    dashboard('delete', '/session', 'Sign out', 'csrf', {
      success: { ...ok(rs.deleted('session')), headers: { 'set-cookie': 'Clears the session cookie.' } },
      errors: [],
    }),
    dashboard('put', '/session/team', 'Switch the team the session acts on', 'csrf', {
      body: { schema: rq.SwitchTeamBody, required: true },
      success: ok(rs.DashboardSession),
      errors: ['validation_error', 'missing_required_field', 'not_found'],
    }),
    dashboard('get', '/sessions', "List the user's live sessions", 'csrf', {
      success: ok(rs.DashboardSessionList),
      errors: [],
    }),
    dashboard('delete', '/sessions/{session_id}', "Revoke one of the user's sessions", 'csrf', {
      success: ok(rs.deleted('session')),
      errors: ['not_found'],
    }),
    dashboard('put', '/password', 'Change the password (and revoke every other session)', 'csrf', {
      body: { schema: rq.ChangePasswordBody, required: true },
      success: ok(rs.ref('user')),
      errors: ['validation_error', 'missing_required_field', 'invalid_credentials'],
    }),
    dashboard('get', '/setup', "Check the first account's setup link", 'sign_in', {
      query: rq.LinkTokenQuery,
      success: ok(rs.SetupLink),
      errors: ['not_found'],
    }),
    dashboard('post', '/setup', 'Create the first user and team', 'sign_in', {
      body: { schema: rq.SetupBody, required: true },
      success: signedIn('The first account: signed in.'),
      errors: ['validation_error', 'missing_required_field', 'not_found'],
    }),
    dashboard('get', '/audit-log', "List the team's audit log", 'csrf', {
      query: rq.PaginationQuery.safeExtend(rq.AuditLogQuery.shape),
      success: ok(rs.AuditLogList),
      errors: ['validation_error', ...TEAM_ERRORS],
    }),
    dashboard('get', '/members', "List the team's members (admins)", 'csrf', {
      success: ok(rs.MemberList),
      errors: TEAM_ERRORS,
    }),
    dashboard('patch', '/members/{user_id}', "Change a member's role (admins)", 'csrf', {
      body: { schema: rq.UpdateMemberBody, required: true },
      success: ok(rs.UpdatedMember),
      // 422 also when the team would be left without an admin.
      errors: ['not_found', 'validation_error', 'missing_required_field', ...TEAM_ERRORS],
    }),
    dashboard('delete', '/members/{user_id}', 'Remove a member (admins)', 'csrf', {
      success: ok(rs.deleted('member')),
      errors: ['not_found', 'validation_error', ...TEAM_ERRORS],
    }),
    dashboard('get', '/invites', "List the team's pending invites (admins)", 'csrf', {
      success: ok(rs.InviteList),
      errors: TEAM_ERRORS,
    }),
    dashboard('post', '/invites', 'Invite someone to the team (admins)', 'csrf', {
      body: { schema: rq.CreateInviteBody, required: true },
      success: created(rs.CreatedInvite),
      errors: ['validation_error', 'missing_required_field', ...TEAM_ERRORS],
    }),
    dashboard('get', '/invites/accept', 'Check an invite link', 'sign_in', {
      query: rq.LinkTokenQuery,
      success: ok(rs.InviteLink),
      errors: ['not_found'],
    }),
    dashboard('post', '/invites/accept', 'Accept an invite (and sign in)', 'sign_in', {
      body: { schema: rq.AcceptInviteBody, required: true },
      success: signedIn('Joined the team: signed in on it.'),
      errors: ['validation_error', 'missing_required_field', 'invalid_credentials', 'not_found'],
    }),
    dashboard('delete', '/invites/{invite_id}', 'Revoke an invite (admins)', 'csrf', {
      success: ok(rs.deleted('invite')),
      errors: ['not_found', ...TEAM_ERRORS],
    }),
    dashboard('post', '/password-resets', "Make a member's password-reset link (admins)", 'csrf', {
      body: { schema: rq.CreatePasswordResetBody, required: true },
      success: created(rs.CreatedPasswordReset),
      errors: ['validation_error', 'missing_required_field', 'not_found', ...TEAM_ERRORS],
    }),
    dashboard('post', '/password-resets/complete', 'Set a new password with a reset link', 'sign_in', {
      body: { schema: rq.CompletePasswordResetBody, required: true },
      success: ok(rs.ref('user')),
      errors: ['validation_error', 'missing_required_field', 'not_found'],
    }),
  ];
}
