import * as rq from './requests.ts';
import * as ds from './dashboard-shapes.ts';
import * as rs from './shapes.ts';
import { AUDIENCE_OPERATIONS } from './audience-operations.ts';
import { FORM_OPERATIONS } from './form-operations.ts';
import { dashboardOperations } from './dashboard-operations.ts';
import { publicLinks } from './public-link-operations.ts';
import { TEMPLATE_VERSION_OPERATIONS } from './template-operations.ts';
import { created, del, get, json, list, ok, patch, post, type Operation, type OperationError } from './operation.ts';

export {
  answerableShared,
  BODY_ERRORS,
  ERROR_STATUS,
  FAMILIES,
  KEYED_ERRORS,
  SESSION_ERRORS,
  SIGN_IN_ERRORS,
  type Family,
  type HttpMethod,
  type Operation,
  type OperationError,
} from './operation.ts';

/**
 * What sending answers besides the body's own errors: a refused field (invalid_parameter: `from` or
 * `topic_id`), a sender domain the team or key may not use (403), a template or topic not found, an
 * idempotency key refused or in use.
 */
const SEND_ERRORS: OperationError[] = [
  'validation_error',
  'missing_required_field',
  'invalid_parameter',
  'validation_error@403',
  'not_found',
  'invalid_idempotency_key',
  'concurrent_idempotent_requests',
  'invalid_idempotent_request',
  'sending_paused',
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
    errors: [...SEND_ERRORS, 'invalid_attachment'],
  }),
  list('/emails', 'Emails', 'List sent emails', rs.EmailList, {
    query: rq.PaginationQuery.safeExtend(rq.EmailFilterQuery.shape),
  }),
  post('/emails/batch', 'Emails', 'Send up to 100 emails at once', {
    idempotent: true,
    sendingAccess: true,
    body: { schema: rq.BatchEmailsBody, required: true },
    success: ok(rs.BatchEmailsResponse),
    // A batch refuses attachments before reading them: never invalid_attachment.
    errors: SEND_ERRORS,
  }),
  get('/emails/export', 'Emails', 'Export the list of emails as CSV', {
    extension: 'The emails the list’s filters select, every one of them, newest first, streamed as CSV.',
    query: rq.EmailFilterQuery,
    success: {
      status: 200,
      contentType: 'text/csv',
      description:
        'A header line, then one line per email: id, created_at, from, to, cc, bcc, subject, last_event, scheduled_at, message_id, tags (name=value, separated by `;`).',
    },
    errors: ['validation_error'],
  }),
  get('/emails/metrics', 'Emails', 'Email metrics', {
    query: rq.EmailMetricsQuery,
    success: ok(rs.EmailMetrics),
    errors: ['validation_error'],
  }),
  get('/emails/{email_id}', 'Emails', 'Retrieve an email', { success: ok(rs.Email), errors: ['not_found'] }),
  patch('/emails/{email_id}', 'Emails', 'Reschedule a scheduled email', {
    body: json(rq.RescheduleEmailBody),
    success: ok(rs.ref('email')),
    errors: ['not_found', 'validation_error', 'missing_required_field', 'validation_error@403'],
  }),
  get('/emails/{email_id}/recipients', 'Emails', 'An email’s recipients and their delivery', {
    extension: 'Each recipient’s delivery state, attempts and the last reply of its server.',
    success: ok(rs.EmailRecipientList),
    errors: ['not_found'],
  }),
  get('/emails/{email_id}/events', 'Emails', 'An email’s events, its timeline', {
    extension:
      'Every event of the email, oldest first, as its webhooks carry them; each id names the webhook deliveries it caused.',
    success: ok(rs.EmailEventList),
    errors: ['not_found'],
  }),
  get('/emails/{email_id}/attempts', 'Emails', 'An email’s delivery attempts, with the SMTP conversation', {
    extension:
      'Per delivery attempt and MX address: the host, the address dialled, TLS version and cipher, and the transcript of our commands and the server’s replies (without the message body), bounded in size.',
    success: ok(rs.EmailAttemptList),
    errors: ['not_found'],
  }),
  get('/emails/{email_id}/insights', 'Emails', 'What could keep an email from the inbox', {
    extension:
      'Checks of the message and its sending domain (a DMARC record, Gmail’s clipping size, List-Unsubscribe on bulk mail, a text part, link domains, the tracking domain, image alt text), each with why it matters.',
    success: ok(rs.EmailInsightList),
    errors: ['not_found'],
  }),
  post('/emails/{email_id}/cancel', 'Emails', 'Cancel a scheduled email', {
    success: ok(rs.ref('email')),
    // 403: the email is not scheduled.
    errors: ['not_found', 'validation_error@403'],
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
  get('/domains/{domain_id}/dmarc-reports', 'Domains', "Retrieve a domain's DMARC aggregate reports", {
    extension:
      'The DMARC aggregate reports receivers sent to the domain’s report address, summed over a period: by ' +
      'day, source IP and reporting organisation, with the sources that fail DMARC.',
    query: rq.DmarcReportQuery,
    success: ok(rs.DmarcReports),
    errors: ['not_found', 'validation_error'],
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
  list('/logs', 'Logs', 'List request logs', rs.LogList, {
    query: rq.PaginationQuery.safeExtend(rq.LogFilterQuery.shape),
  }),
  get('/logs/{log_id}', 'Logs', 'Retrieve a request log', {
    success: ok(rs.Log),
    errors: ['not_found', 'validation_error'],
  }),

  // ---- Templates ----
  post('/templates', 'Templates', 'Create a template', {
    body: { schema: rq.CreateTemplateBody, required: true },
    success: created(rs.TemplateRef),
    // invalid_parameter: a `from` that is not an address.
    errors: ['validation_error', 'missing_required_field', 'invalid_parameter'],
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
    errors: ['not_found', 'validation_error', 'invalid_parameter'],
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
  ...TEMPLATE_VERSION_OPERATIONS,

  ...AUDIENCE_OPERATIONS,

  // ---- Broadcasts ----
  post('/broadcasts', 'Broadcasts', 'Create a broadcast', {
    body: { schema: rq.CreateBroadcastBody, required: true },
    success: created(rs.ref('broadcast')),
    errors: [
      'validation_error',
      'missing_required_field',
      'not_found',
      'invalid_parameter',
      'validation_error@403',
      'broadcast_review_failed',
    ],
  }),
  get('/broadcasts/settings', 'Broadcasts', 'The team’s broadcast settings', {
    extension: 'Whether a member’s broadcast waits for an admin’s approval before it goes (`require_approval`).',
    success: ok(rs.BroadcastSettings),
    errors: [],
  }),
  patch('/broadcasts/settings', 'Broadcasts', 'Change the team’s broadcast settings', {
    extension: 'Admins (and API keys) only; recorded in the audit log.',
    body: json(rq.UpdateBroadcastSettingsBody),
    success: ok(rs.BroadcastSettings),
    errors: ['validation_error'],
  }),
  list('/broadcasts', 'Broadcasts', 'List broadcasts', rs.BroadcastList, {
    query: rq.PaginationQuery.safeExtend(rq.BroadcastListQuery.shape),
  }),
  get('/broadcasts/{id}', 'Broadcasts', 'Retrieve a broadcast', { success: ok(rs.Broadcast), errors: ['not_found'] }),
  patch('/broadcasts/{id}', 'Broadcasts', 'Update a draft broadcast', {
    body: json(rq.UpdateBroadcastBody),
    success: ok(rs.ref('broadcast')),
    errors: ['not_found', 'validation_error', 'missing_required_field', 'invalid_parameter', 'validation_error@403'],
  }),
  del('/broadcasts/{id}', 'Broadcasts', 'Delete a draft or scheduled broadcast', {
    success: ok(rs.deleted('broadcast')),
    errors: ['not_found', 'validation_error', 'validation_error@403'],
  }),
  post('/broadcasts/{id}/send', 'Broadcasts', 'Send or schedule a broadcast', {
    body: json(rq.SendBroadcastBody),
    success: ok(rs.SentBroadcast),
    errors: [
      'not_found',
      'validation_error',
      'missing_required_field',
      'invalid_parameter',
      'validation_error@403',
      'broadcast_review_failed',
      'sending_paused',
    ],
  }),
  post('/broadcasts/{id}/cancel', 'Broadcasts', 'Cancel a scheduled broadcast', {
    success: ok(rs.ref('broadcast')),
    errors: ['not_found', 'validation_error', 'validation_error@403'],
  }),
  get('/broadcasts/{id}/review', 'Broadcasts', 'Review a broadcast before sending it', {
    extension:
      'The checks sending makes (errors block it: from domain, subject, content, segment, topic, unsubscribe link) and the warnings it does not (placeholders no contact can fill, the email insights), with how many contacts it would reach.',
    success: ok(rs.BroadcastReview),
    errors: ['not_found'],
  }),
  get('/broadcasts/{id}/preview', 'Broadcasts', 'A broadcast as one contact would receive it', {
    extension: 'Subject, html and text personalised for the contact, with its own unsubscribe link.',
    query: rq.BroadcastPreviewQuery,
    success: ok(rs.BroadcastPreview),
    errors: ['not_found', 'validation_error'],
  }),
  post('/broadcasts/{id}/test', 'Broadcasts', 'Send test copies of a broadcast', {
    extension:
      'One personalised copy per address through the normal send pipeline, subject marked [Test], tagged broadcast_test; not counted in the broadcast’s results.',
    body: { schema: rq.BroadcastTestBody, required: true },
    success: ok(rs.BroadcastTestSent),
    errors: [
      'not_found',
      'validation_error',
      'missing_required_field',
      'invalid_parameter',
      'validation_error@403',
      'sending_paused',
    ],
  }),
  post('/broadcasts/{id}/approve', 'Broadcasts', 'Approve a broadcast awaiting approval', {
    extension: 'Admins (and API keys) only: it is then sent, or scheduled for the time asked.',
    success: ok(rs.BroadcastSent),
    errors: [
      'not_found',
      'validation_error',
      'missing_required_field',
      'invalid_parameter',
      'validation_error@403',
      'broadcast_review_failed',
      'sending_paused',
    ],
  }),
  post('/broadcasts/{id}/reject', 'Broadcasts', 'Reject a broadcast awaiting approval', {
    extension: 'Admins (and API keys) only: it goes back to draft with the reason.',
    body: json(rq.RejectBroadcastBody),
    success: ok(rs.BroadcastSent),
    errors: ['not_found', 'validation_error', 'validation_error@403'],
  }),
  get('/broadcasts/{id}/results', 'Broadcasts', 'A broadcast’s results', {
    extension:
      'Its recipients counted by outcome: delivered, opened (people apart from machines), clicked (people apart from scanners), unsubscribed, bounced, complained, suppressed.',
    success: ok(rs.BroadcastResults),
    errors: ['not_found'],
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

  // ---- Reputation ----
  get('/reputation', 'Reputation', 'The team’s sending reputation', {
    extension:
      'Postline’s own: the rolling bounce and complaint rates of the team and of each sending domain over their last sends, the lines in force (the install’s, or those the operator set for the team), and any pause the reputation guard made.',
    success: ok(rs.Reputation),
    errors: [],
  }),
  post('/reputation/resume', 'Reputation', 'Resume paused sending', {
    extension:
      'Postline’s own: admins (and full-access API keys) only. Lifts the team’s pause, or a domain’s; the window starts afresh and the emails that waited are sent.',
    body: json(rq.ResumeSendingBody),
    success: ok(rs.Reputation),
    errors: ['validation_error', 'not_found', 'invalid_permission'],
  }),

  // ---- Deliverability ----
  get('/deliverability/providers', 'Deliverability', 'Traffic shaping per mailbox provider', {
    extension:
      'Postline’s own: how fast the install sends to each mailbox provider, and why and until when it is slowed or held after the provider pushed back (a `421 4.7.28`). Install-wide, the same for every team; read only: Gmail, Microsoft, Yahoo and Apple are named, any other mail server only counted, and replies show no address.',
    success: ok(rs.ProviderShaping),
    errors: [],
  }),

  // ---- Development inbox ----
  get('/dev-inbox', 'Development Inbox', 'Whether the development inbox is on', {
    extension:
      'Postline’s own: under DEV_INBOX the MTA keeps every message in the install instead of sending it, as Mailpit would, behind the same API as production.',
    success: ok(rs.DevInboxStatus),
    errors: [],
  }),
  get('/dev-inbox/messages', 'Development Inbox', 'List the messages kept in the development inbox', {
    extension: 'Newest first, as each would have gone out (signed), with a search over subject, sender and recipients.',
    query: rq.DevInboxQuery,
    success: ok(rs.DevInboxMessageList),
    errors: ['validation_error'],
  }),
  del('/dev-inbox/messages', 'Development Inbox', 'Empty the development inbox', {
    extension: 'Deletes every message kept for the team (the emails and their events stay).',
    success: ok(rs.DevInboxEmptied),
    errors: [],
  }),
  get('/dev-inbox/messages/{id}', 'Development Inbox', 'Retrieve a kept message', {
    extension:
      'Its header fields in order, its HTML and text parts and its attachments, read from the message as sent.',
    success: ok(rs.DevInboxMessage),
    errors: ['not_found'],
  }),
  get('/dev-inbox/messages/{id}/raw', 'Development Inbox', 'Download a kept message', {
    extension: 'The whole message as it would have gone out, DKIM-signed.',
    success: { status: 200, contentType: 'message/rfc822', description: 'The message, CRLF line endings.' },
    errors: ['not_found'],
  }),
  del('/dev-inbox/messages/{id}', 'Development Inbox', 'Delete a kept message', {
    success: ok(rs.deleted('dev_inbox_message')),
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
  get('/webhooks/deliveries', 'Webhooks', 'Webhook deliveries of some events', {
    extension:
      'Where the given events (an email’s, from GET /emails/{id}/events) were delivered: each endpoint, the delivery state and attempts. Events of another team are not listed.',
    query: rq.WebhookDeliveriesQuery,
    success: ok(rs.WebhookDeliveryList),
    errors: ['validation_error', 'missing_required_field'],
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

  post('/webhooks/{webhook_id}/events/replay', 'Webhooks', 'Deliver every failed event since a time again', {
    extension: 'Bulk recovery is not in the published reference.',
    body: { schema: rq.ReplayWebhookEventsBody, required: true },
    success: ok(rs.WebhookReplay),
    errors: ['not_found', 'validation_error', 'missing_required_field'],
  }),
  post('/webhooks/{webhook_id}/test', 'Webhooks', 'Deliver a signed sample event', {
    extension: 'Test events are not in the published reference.',
    body: json(rq.TestWebhookBody),
    success: { status: 202, schema: rs.WebhookTestEvent },
    errors: ['not_found', 'validation_error'],
  }),
  get('/audit-log', 'Logs', "List the team's audit log", {
    extension: 'The audit log (the dashboard’s `GET /dashboard-api/audit-log`) served to a full-access key.',
    query: rq.PaginationQuery.safeExtend(rq.AuditLogQuery.shape),
    success: ok(ds.AuditLogList),
    errors: ['validation_error'],
  }),

  // ---- SMTP relay ----
  get('/relay/credentials', 'SMTP Relay', "Check an API key (the SMTP relay's AUTH)", {
    extension: 'Used by the SMTP relay to check the API key a client gives at AUTH.',
    sendingAccess: true,
    rateLimitExempt: true,
    success: ok(rs.RelayCredentials),
    errors: [],
  }),

  // ---- Public links (no API key: the signed token is the credential) ----
  ...publicLinks(),

  // ---- Signup forms (the resource, and its hosted pages without a key) ----
  ...FORM_OPERATIONS,

  // ---- The dashboard's own routes (a session cookie, no API key) ----
  ...dashboardOperations(),
];
