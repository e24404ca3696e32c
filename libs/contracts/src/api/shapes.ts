import { z } from 'zod';
import { DomainCapabilities, DomainRecordStatus, DomainStatus, SuppressionOrigin } from '../events.ts';
import { ListEnvelope } from '../pagination.ts';
import { REPUTATION_THRESHOLD_NAMES } from '../reputation-thresholds.ts';

export { Form, FormList } from './form-shapes.ts';

// The response bodies of the public API, as the owners write them. Objects are strict: a field an owner adds
// without documenting it fails the integration tests' validation of every response.

/** `2026-01-02 03:04:05.678+00`, the timestamp format of most resources (Postgres's text form). */
export const Timestamp = z.string().describe('A timestamp such as `2026-01-02 03:04:05.678+00`.');
/** An ISO 8601 timestamp (`2026-01-02T03:04:05.678Z`). */
export const IsoTimestamp = z.string().describe('An ISO 8601 timestamp.');
export const Id = z.string();
export const NullableString = z.string().nullable();
const Addresses = z.array(z.string());

/** `{ object, id }`, what most writes answer. */
export function ref<O extends string>(object: O) {
  return z.strictObject({ object: z.literal(object), id: Id });
}

/** `{ object, id, deleted: true }`, what most deletes answer. */
export function deleted<O extends string>(object: O) {
  return z.strictObject({ object: z.literal(object), id: Id, deleted: z.literal(true) });
}

/** A single resource: its list item with `object` and the detail fields. */
function single<O extends string, S extends z.ZodRawShape, M extends z.ZodRawShape = Record<never, never>>(
  object: O,
  item: z.ZodObject<S>,
  more?: M,
) {
  // `more` typed by its own parameter, so that ApiShape<'Domain'> keeps every field's type.
  return z.strictObject({ object: z.literal(object), ...item.shape, ...(more ?? ({} as M)) });
}

export const Tag = z.strictObject({ name: z.string(), value: z.string() });

// ---- Emails --------------------------------------------------------------------------------------------
export const SendEmailResponse = z.strictObject({ id: Id });
export const BatchEmailsResponse = z.strictObject({
  data: z.array(z.strictObject({ id: Id })),
  errors: z
    .array(z.strictObject({ index: z.number().int(), message: z.string() }))
    .optional()
    .describe('Permissive batch validation only: the items refused, by index.'),
});
const EmailListItem = z.strictObject({
  id: Id,
  to: Addresses,
  from: z.string(),
  created_at: Timestamp,
  subject: z.string(),
  bcc: Addresses.nullable(),
  cc: Addresses.nullable(),
  reply_to: Addresses.nullable(),
  last_event: z.string(),
  scheduled_at: Timestamp.nullable(),
  message_id: NullableString,
  topic_id: NullableString,
});
export const EmailList = ListEnvelope(EmailListItem);
export const Email = single('email', EmailListItem, {
  html: NullableString,
  text: NullableString,
  tags: z.array(Tag),
  api_key_id: NullableString.describe(
    'Postline extension: the API key the email was sent with (null: none, as for a broadcast’s).',
  ),
  request_id: NullableString.describe('Postline extension: the log of the API request that sent it (GET /logs/{id}).'),
});
/** Postline extension: where each recipient of an email stands, and what its server last said. */
export const EmailRecipientList = z.strictObject({
  object: z.literal('list'),
  data: z.array(
    z.strictObject({
      address: z.string(),
      status: z.enum(['pending', 'deferred', 'delivered', 'bounced', 'failed', 'suppressed', 'complained', 'canceled']),
      attempts: z.number().int().describe('Delivery attempts made to this recipient so far.'),
      last_code: z.number().int().nullable().describe('The SMTP reply code of the last attempt.'),
      last_response: NullableString.describe('The receiving server’s last reply (or why no server answered).'),
      bounce_type: NullableString,
      bounce_sub_type: NullableString,
      updated_at: Timestamp,
    }),
  ),
});
/** GET /emails/metrics: totals over the range, and a row per combination of the dimensions. */
export const EmailMetrics = z.strictObject({
  object: z.literal('metrics'),
  start_date: z.string(),
  end_date: z.string(),
  granularity: z.string(),
  metrics: z.array(z.string()),
  dimensions: z.array(z.string()),
  totals: z.record(z.string(), z.number()),
  data: z.array(
    z
      .record(z.string(), z.union([z.string(), z.number()]))
      .describe(
        'The row’s dimensions (`period`: YYYY-MM-DD, or YYYY-MM-DDTHH:00 hourly, in `timezone`; `domain_id` with `domain_name`, `email_id`, `broadcast_id` with `broadcast_name`, `provider`) and one number per metric.',
      ),
  ),
});
/** Postline extension: an email's events, oldest first, as its timeline. */
export const EmailEventList = z.strictObject({
  object: z.literal('list'),
  has_more: z.boolean().describe('true when the email has more than the 1,000 events listed (its first).'),
  data: z.array(
    z.strictObject({
      id: z.string().describe('The event’s id: the `source event` of the webhook deliveries it caused.'),
      type: z.string(),
      created_at: Timestamp,
      data: z
        .record(z.string(), z.unknown())
        .describe('What the event carries beyond the email’s fields: `to`, `bounce`, `click`, ...'),
    }),
  ),
});
/** Postline extension: each MX address a delivery attempt tried, with its TLS and SMTP transcript. */
export const EmailAttemptList = z.strictObject({
  object: z.literal('list'),
  has_more: z.boolean().describe('true when the email has more than the 500 attempt traces listed (its first).'),
  data: z.array(
    z.strictObject({
      attempt: z.number().int().describe('1 for the first attempt, 2 for the first retry, ...'),
      recipients: z.array(z.string()).describe('The recipients this transaction was for.'),
      mx: NullableString.describe('The MX host; null when the MX lookup gave no host to try.'),
      ip: NullableString.describe('The address dialled.'),
      port: z.number().int().nullable(),
      tls: z
        .strictObject({ version: z.string(), cipher: z.string() })
        .nullable()
        .describe('The session’s TLS; null in plaintext.'),
      started_at: Timestamp,
      duration_ms: z.number().int(),
      transcript: z
        .array(z.string())
        .describe(
          '`C: ` our commands, `S: ` the server’s replies, `* ` what happened besides (connects, lookups, TLS). Never the message body.',
        ),
      omitted_lines: z.number().int().describe('Lines left out past the transcript’s bound (120 lines, 16 KB).'),
      message_headers: NullableString.describe(
        'The header block of the message as signed and sent, its DKIM-Signature included (the body is not kept); null for an MX lookup.',
      ),
    }),
  ),
});
/** Postline extension: what could keep an email from the inbox, or from reading well, and why it matters. */
export const EmailInsightList = z.strictObject({
  object: z.literal('list'),
  data: z.array(
    z.strictObject({
      id: z.enum([
        'dmarc_record',
        'html_size',
        'list_unsubscribe',
        'text_part',
        'link_domains',
        'tracking_domain',
        'image_alt',
      ]),
      group: z.enum(['needs_attention', 'could_improve']),
      passed: z.boolean().describe('true: nothing to do for this email.'),
      title: z.string(),
      detail: z.string().describe('What was found in this email, and why it matters.'),
    }),
  ),
});
export const ShareEmailResponse = z.strictObject({ object: z.literal('email'), id: Id, url: z.string() });

/** An attachment with its signed download link (sent and received emails alike). */
const AttachmentLink = z.strictObject({
  id: Id,
  filename: NullableString,
  size: z.number().int(),
  content_type: z.string(),
  content_disposition: z.enum(['attachment', 'inline']),
  // A sent attachment without a content id leaves the field out (Resend types it a string); a received one answers null.
  content_id: NullableString.optional(),
  download_url: z.string(),
  expires_at: IsoTimestamp,
});
export const AttachmentList = ListEnvelope(AttachmentLink);
export const Attachment = z.strictObject({ object: z.literal('attachment'), ...AttachmentLink.shape });

// ---- Received emails -----------------------------------------------------------------------------------
const ReceivedAttachment = z.strictObject({
  id: Id,
  filename: NullableString,
  content_type: z.string(),
  content_id: NullableString,
  content_disposition: NullableString,
  size: z.number().int(),
});
const ReceivedEmailItem = z.strictObject({
  id: Id,
  to: Addresses,
  from: z.string(),
  created_at: IsoTimestamp,
  subject: z.string(),
  bcc: Addresses.nullable(),
  cc: Addresses.nullable(),
  reply_to: Addresses.nullable(),
  message_id: NullableString,
  attachments: z.array(ReceivedAttachment),
});
export const ReceivedEmailList = ListEnvelope(ReceivedEmailItem);
export const ReceivedEmail = single('email', ReceivedEmailItem, {
  html: NullableString,
  html_format: z.enum(['data_uri', 'cid']).describe('How inline images are referenced.'),
  text: NullableString,
  headers: z.record(z.string(), z.unknown()),
  received_for: Addresses.describe('The envelope recipients the message was accepted for.'),
  authentication: z
    .strictObject({ spf: NullableString, dkim: NullableString, dmarc: NullableString })
    .describe('The SPF, DKIM and DMARC verdicts of the received message (null for an old email).'),
  raw: z
    .strictObject({ download_url: z.string(), expires_at: IsoTimestamp })
    .nullable()
    .describe('A signed link to the whole message.'),
});

// ---- Development inbox ---------------------------------------------------------------------------------
export const DevInboxStatus = z.strictObject({
  object: z.literal('dev_inbox'),
  enabled: z
    .boolean()
    .describe(
      'Whether DEV_INBOX is on: every message is kept here instead of going to its recipients’ servers. Off, only the onboarding sender’s emails to the team’s members are kept.',
    ),
  count: z.number().int().describe('The messages kept for the team.'),
});
export const DevInboxEmptied = z.strictObject({
  object: z.literal('dev_inbox'),
  deleted: z.number().int().describe('How many messages were deleted.'),
});
const DevInboxMessageItem = z.strictObject({
  id: Id,
  email_id: Id.describe('The email it was kept for: GET /emails/{email_id}, its events and attempts.'),
  from: z.string(),
  to: Addresses.describe('The recipients of this copy (its envelope, as RCPT TO would have named them).'),
  subject: z.string(),
  size: z.number().int().describe('The message’s size in bytes, as signed.'),
  created_at: Timestamp.describe('When the MTA kept it.'),
});
export const DevInboxMessageList = ListEnvelope(DevInboxMessageItem);
export const DevInboxMessage = single('dev_inbox_message', DevInboxMessageItem, {
  envelope_from: z.string().describe('MAIL FROM: the email’s VERP return path.'),
  headers: z
    .array(z.strictObject({ name: z.string(), value: z.string() }))
    .describe('Every header field, in order, as sent (DKIM-Signature included).'),
  html: NullableString,
  text: NullableString,
  attachments: z.array(z.strictObject({ filename: NullableString, content_type: z.string(), size: z.number().int() })),
});

// ---- Domains -------------------------------------------------------------------------------------------
const DomainRecord = z.strictObject({
  record: z.enum(['SPF', 'DKIM', 'Receiving', 'Tracking', 'TrackingCAA']),
  name: z.string(),
  type: z.enum(['MX', 'TXT', 'CNAME', 'CAA']),
  ttl: z.string(),
  status: DomainRecordStatus,
  value: z.string(),
  priority: z.number().int().optional(),
});
const DomainItem = z.strictObject({
  id: Id,
  name: z.string(),
  status: DomainStatus,
  created_at: Timestamp,
  region: z.string(),
  open_tracking: z.boolean(),
  click_tracking: z.boolean(),
  capabilities: DomainCapabilities,
});
export const DomainList = ListEnvelope(DomainItem);
const DomainDetail = {
  tracking_subdomain: z.string().optional(),
  records: z.array(DomainRecord),
  tls: z
    .enum(['opportunistic', 'enforced'])
    .describe(
      'Postline extension: the TLS the sender uses to receiving servers: `opportunistic` (STARTTLS when offered) ' +
        'or `enforced` (no delivery without it).',
    ),
};
export const Domain = single('domain', DomainItem, DomainDetail);
export const CreatedDomain = z.strictObject({ ...DomainItem.shape, ...DomainDetail });

// ---- API keys and logs ---------------------------------------------------------------------------------
export const CreatedApiKey = z.strictObject({ id: Id, token: z.string() });
export const ApiKeyList = ListEnvelope(
  z.strictObject({
    id: Id,
    name: z.string(),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    permission: z.enum(['full_access', 'sending_access']).describe('Postline extension: what the key may call.'),
    domain_id: Id.nullable().describe('Postline extension: the one domain a `sending_access` key may send from.'),
    expires_at: Timestamp.nullable().describe('Postline extension: when the key stops working; null for never.'),
  }),
);
const LogItem = z.strictObject({
  id: Id,
  created_at: Timestamp,
  endpoint: z.string(),
  method: z.string(),
  response_status: z.number().int(),
  user_agent: NullableString,
  api_key: z
    .strictObject({ id: Id, name: NullableString })
    .nullable()
    .describe('Postline extension: the API key that made the request (its name null once deleted); null for a user.'),
  user: z
    .strictObject({ id: Id, email: NullableString })
    .nullable()
    .describe('Postline extension: the dashboard user whose session made the request; null for an API key.'),
});
export const LogList = ListEnvelope(LogItem);
export const Log = single('log', LogItem, { request_body: z.unknown(), response_body: z.unknown() });
export const RelayCredentials = z.strictObject({
  object: z.literal('relay_credentials'),
  permission: z.enum(['full_access', 'sending_access']),
});

// ---- Templates -----------------------------------------------------------------------------------------
const TemplateStatus = z.enum(['draft', 'published']);
const TemplateItem = z.strictObject({
  id: Id,
  name: z.string(),
  status: TemplateStatus,
  published_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  alias: NullableString,
  has_unpublished_versions: z
    .boolean()
    .describe('Whether the current version is ahead of the published one (in a list: a Postline extension).'),
});
export const TemplateList = ListEnvelope(TemplateItem);
export const TemplateRef = z.strictObject({ id: Id, object: z.literal('template') });
const TemplateVariables = z.array(
  z.strictObject({
    id: Id,
    key: z.string(),
    type: z.string(),
    fallback_value: z.union([z.string(), z.number(), z.null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);
export const Template = z.strictObject({
  object: z.literal('template'),
  ...TemplateItem.shape,
  current_version_id: Id,
  from: NullableString,
  subject: NullableString,
  reply_to: Addresses.nullable(),
  html: z.string(),
  text: NullableString,
  variables: TemplateVariables,
});
/** Who last wrote a template version (Postline extension); null for versions older than authors. */
export const TemplateVersionAuthor = z
  .strictObject({ type: z.enum(['user', 'api_key']), id: Id })
  .nullable()
  .describe('Who last wrote the version: a dashboard user (`user`, by id) or an API key (`api_key`, by id).');
const TemplateVersionItem = z.strictObject({
  id: Id,
  subject: NullableString,
  author: TemplateVersionAuthor,
  current: z.boolean().describe('The version GET /templates/{id} shows and PATCH edits.'),
  published: z.boolean().describe('The version sends use.'),
  published_at: Timestamp.nullable().describe('When it was last published (null: never).'),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const TemplateVersionList = ListEnvelope(TemplateVersionItem);
export const TemplateVersion = z.strictObject({
  object: z.literal('template_version'),
  template_id: Id,
  ...TemplateVersionItem.shape,
  from: NullableString,
  reply_to: Addresses.nullable(),
  html: z.string(),
  text: NullableString,
  variables: TemplateVariables,
});

// ---- Audience: contacts, segments, topics, properties, imports -------------------------------------------
const ContactItem = z.strictObject({
  id: Id,
  email: z.string(),
  first_name: NullableString,
  last_name: NullableString,
  created_at: Timestamp,
  unsubscribed: z.boolean(),
});
export const ContactList = ListEnvelope(ContactItem);
export const Contact = single('contact', ContactItem, { properties: z.record(z.string(), z.unknown()) });
export const DeletedContact = z.strictObject({
  object: z.literal('contact'),
  contact: Id,
  deleted: z.literal(true),
});
const SegmentItem = z.strictObject({ id: Id, name: z.string(), created_at: Timestamp });
export const SegmentList = ListEnvelope(SegmentItem);
/** GET /segments (and /audiences): with `counts=true`, each segment's contacts. */
export const CountedSegmentList = ListEnvelope(
  SegmentItem.safeExtend({
    contacts_count: z.number().int().optional().describe('Postline extension, with `counts=true`: its contacts.'),
  }),
);
export function segment<O extends string>(object: O) {
  return single(object, SegmentItem);
}
export function createdSegment<O extends string>(object: O) {
  return z.strictObject({ object: z.literal(object), id: Id, name: z.string() });
}
export const ContactSegmentAdded = z.strictObject({ id: Id });
export const ContactSegmentRemoved = z.strictObject({
  object: z.literal('contact_segment'),
  id: Id,
  audienceId: Id,
  deleted: z.literal(true),
});
const Subscription = z.enum(['opt_in', 'opt_out']);
const TopicItem = z.strictObject({
  id: Id,
  name: z.string(),
  description: NullableString,
  default_subscription: Subscription,
  visibility: z.enum(['public', 'private']),
  created_at: Timestamp,
});
export const TopicList = ListEnvelope(
  TopicItem.safeExtend({
    counts: z
      .strictObject({ opt_in: z.number().int(), opt_out: z.number().int() })
      .optional()
      .describe("Postline extension, with `counts=true`: the team's contacts by their subscription to it."),
  }),
);
export const Topic = single('topic', TopicItem);
export const ContactTopicList = ListEnvelope(
  z.strictObject({ id: Id, name: z.string(), description: NullableString, subscription: Subscription }),
);
const PropertyItem = z.strictObject({
  id: Id,
  key: z.string(),
  type: z.enum(['string', 'number']),
  fallback_value: z.union([z.string(), z.number(), z.null()]),
  created_at: Timestamp,
});
export const ContactPropertyList = ListEnvelope(
  PropertyItem.safeExtend({
    contacts_count: z
      .number()
      .int()
      .optional()
      .describe('Postline extension, with `counts=true`: the contacts with a value for it.'),
  }),
);
export const ContactProperty = single('contact_property', PropertyItem);
const ContactImportItem = z.strictObject({
  object: z.literal('contact_import'),
  id: Id,
  status: z.enum(['queued', 'in_progress', 'completed', 'failed']),
  created_at: Timestamp,
  completed_at: Timestamp.nullable(),
  counts: z.strictObject({
    total: z.number().int(),
    created: z.number().int(),
    updated: z.number().int(),
    skipped: z.number().int(),
    failed: z.number().int(),
  }),
  error: NullableString,
});
export const ContactImportList = ListEnvelope(ContactImportItem);
export const ContactImport = ContactImportItem.extend({
  errors: z.array(z.strictObject({ row: z.number().int(), reason: z.string() })),
});

// ---- Broadcasts ----------------------------------------------------------------------------------------
const BroadcastStatus = z
  .enum(['draft', 'scheduled', 'queued', 'sent', 'canceled', 'awaiting_approval'])
  .describe('`awaiting_approval` is Postline’s: a member’s send waiting for an admin (the team’s approval setting).');
const BroadcastItem = z.strictObject({
  id: Id,
  name: NullableString,
  audience_id: NullableString,
  segment_id: NullableString,
  status: BroadcastStatus,
  created_at: Timestamp,
  scheduled_at: Timestamp.nullable(),
  sent_at: Timestamp.nullable(),
  topic_id: NullableString,
});
export const BroadcastList = ListEnvelope(BroadcastItem);
export const Broadcast = single('broadcast', BroadcastItem, {
  from: NullableString,
  subject: NullableString,
  reply_to: Addresses.nullable(),
  preview_text: NullableString,
  html: NullableString,
  text: NullableString,
  approval: z
    .strictObject({
      requested_by: NullableString.describe('The dashboard user who asked to send it.'),
      requested_at: Timestamp,
      scheduled_at: Timestamp.nullable().describe('The time asked for; null: as soon as it is approved.'),
    })
    .nullable()
    .describe('Postline extension: while `awaiting_approval`, who asked to send it, when, and for when.'),
  rejection: z
    .strictObject({
      rejected_by: NullableString.describe('The admin who rejected it (null: an API key).'),
      rejected_at: Timestamp,
      reason: NullableString,
    })
    .nullable()
    .describe('Postline extension: its last rejection, until it is sent again.'),
});
export const SentBroadcast = z.strictObject({ id: Id });
const ReviewLevel = z.enum(['error', 'warning', 'ok']);
export const BroadcastReview = z.strictObject({
  object: z.literal('broadcast_review'),
  id: Id,
  status: BroadcastStatus,
  can_send: z.boolean().describe('No check is an error: sending is not refused for the review.'),
  recipients: z
    .number()
    .int()
    .describe(
      'The contacts it would be sent to now: the segment’s, less the unsubscribed, the topic’s opt-outs and the suppressed.',
    ),
  suppressed: z.number().int().describe('The segment’s subscribed contacts on the suppression list (sent nothing).'),
  checks: z.array(
    z.strictObject({
      check: z
        .string()
        .describe(
          'from_domain, subject, content, segment, topic, unsubscribe_link, placeholders, recipients, then the email insights (dmarc_record, html_size, list_unsubscribe, text_part, link_domains, tracking_domain, image_alt).',
        ),
      level: ReviewLevel.describe('`error` blocks sending; `warning` does not.'),
      message: z.string(),
    }),
  ),
});
export const BroadcastPreview = z.strictObject({
  object: z.literal('broadcast_preview'),
  id: Id,
  contact_id: Id,
  email: z.string(),
  subject: z.string(),
  html: NullableString,
  text: NullableString.describe('null: made from the html when sent; "": no text part.'),
});
export const BroadcastTestSent = z.strictObject({
  data: z.array(z.strictObject({ id: Id.describe('The test email’s id (GET /emails/{id}).'), to: z.string() })),
});
export const BroadcastSent = z.strictObject({ object: z.literal('broadcast'), id: Id, status: BroadcastStatus });
const ResultCount = z.number().int();
export const BroadcastResults = z.strictObject({
  object: z.literal('broadcast_results'),
  id: Id,
  status: BroadcastStatus,
  sent_at: Timestamp.nullable(),
  sent: ResultCount.describe('Contacts sent an email.'),
  delivered: ResultCount,
  opened: z.strictObject({
    people: ResultCount.describe('Emails opened by a person at least once.'),
    machines: ResultCount.describe('Emails opened only by machines (privacy proxies, prefetchers).'),
  }),
  clicked: z.strictObject({
    people: ResultCount.describe('Emails with a link followed by a person.'),
    scanners: ResultCount.describe('Emails whose links only scanners followed.'),
  }),
  unsubscribed: ResultCount.describe('Recipients since unsubscribed, from every broadcast or from its topic.'),
  bounced: ResultCount,
  complained: ResultCount,
  suppressed: ResultCount.describe('Recipients not sent to: on the suppression list.'),
});
export const BroadcastSettings = z.strictObject({
  object: z.literal('broadcast_settings'),
  require_approval: z.boolean(),
});
export const BroadcastRecipientList = ListEnvelope(
  z.strictObject({
    id: Id,
    contact_id: NullableString,
    email: z.string(),
    bounce_type: z.enum(['permanent', 'transient', 'undetermined']).optional().describe('`type=bounced` only.'),
    count: z.number().int().optional().describe('`type=opened` and `type=clicked` only.'),
    clicked_links: z.array(z.string()).optional().describe('`type=clicked` only.'),
  }),
);
export const BroadcastClickedLinkList = ListEnvelope(
  z.strictObject({ id: Id, url: z.string(), clicks: z.number().int(), unique_clicks: z.number().int() }),
);

// ---- Suppressions --------------------------------------------------------------------------------------
const SuppressionItem = z.strictObject({
  id: Id,
  email: z.string(),
  origin: SuppressionOrigin,
  source_id: NullableString,
  created_at: Timestamp,
});
export const SuppressionList = ListEnvelope(SuppressionItem);
export const Suppression = single('suppression', SuppressionItem);
export const SuppressionBatchAdded = z.strictObject({ data: z.array(ref('suppression')) });
export const SuppressionBatchRemoved = z.strictObject({
  data: z.array(
    z
      .strictObject({ object: z.literal('suppression'), id: NullableString, deleted: z.boolean() })
      .describe('One per address or id given, in order; `id` is null and `deleted` false for one not listed.'),
  ),
});

// ---- Webhooks ------------------------------------------------------------------------------------------
const WebhookItem = z.strictObject({
  id: Id,
  endpoint: z.string(),
  events: z.array(z.string()),
  status: z.enum(['enabled', 'disabled']),
  created_at: Timestamp,
  disabled_reason: z
    .string()
    .nullable()
    .describe('Postline extension: why a disabled endpoint was disabled, null while enabled.'),
  disabled_at: Timestamp.nullable().describe(
    'Postline extension: when a disabled endpoint was disabled, null while enabled.',
  ),
  disabled_by: z
    .enum(['failures', 'api'])
    .nullable()
    .describe(
      'Postline extension: what disabled it, null while enabled: `failures` (five days of failed deliveries; ' +
        'its events keep being recorded, failed, to replay once it is enabled again) or `api` (no events are recorded).',
    ),
  failing_since: Timestamp.nullable().describe(
    'Postline extension: the first failure of the endpoint’s current unbroken run of failed deliveries (null ' +
      'after any success). Five days of them disable it; replaying its failed events since then ' +
      '(POST /webhooks/{id}/events/replay) recovers every event of the run, those recorded while it was disabled included.',
  ),
});
export const WebhookList = ListEnvelope(WebhookItem);
export const Webhook = single('webhook', WebhookItem, {
  signing_secret: z.string(),
  previous_secret_expires_at: Timestamp.nullable().describe(
    'Postline extension: until when the secret before the last rotation still signs (second), ' +
      'null when no previous secret signs any more.',
  ),
});
export const WebhookSecret = z.strictObject({ object: z.literal('webhook'), id: Id, signing_secret: z.string() });
const DeliveryStatus = z
  .enum(['pending', 'attempting', 'success', 'failed'])
  .describe('Postline extension: the delivery state of the event to this endpoint.');
const FailureReason = z
  .enum(['endpoint_disabled'])
  .nullable()
  .describe(
    'Postline extension: why a failed event ended without (all) its attempts: `endpoint_disabled`, its endpoint ' +
      'was disabled by its failures (an event that happened meanwhile is recorded failed, with no attempt, to ' +
      'replay once the endpoint is enabled again). Null otherwise.',
  );
export const WebhookEventList = ListEnvelope(
  z.strictObject({
    id: Id,
    type: z.string(),
    created_at: Timestamp,
    status: DeliveryStatus,
    failure_reason: FailureReason,
  }),
);
/** Postline extension: the deliveries of some events to the team's endpoints. */
export const WebhookDeliveryList = z.strictObject({
  object: z.literal('list'),
  data: z.array(
    z.strictObject({
      id: Id.describe('The webhook event: GET /webhooks/{webhook_id}/events/{id} and its attempts.'),
      webhook_id: Id,
      endpoint: z.string(),
      source_event_id: z.string().describe('The event delivered (an id of GET /emails/{id}/events).'),
      type: z.string(),
      status: DeliveryStatus,
      attempts: z.number().int(),
      next_attempt_at: Timestamp.nullable(),
      created_at: Timestamp,
    }),
  ),
});
export const WebhookEvent = z.strictObject({
  object: z.literal('webhook_event'),
  id: Id,
  type: z.string(),
  created_at: Timestamp,
  status: DeliveryStatus,
  failure_reason: FailureReason,
  next_attempt_at: Timestamp.nullable(),
  attempts: z.number().int(),
  payload: z.record(z.string(), z.unknown()).describe('The body delivered (see `webhooks`).'),
});
export const WebhookReplay = z.strictObject({
  object: z.literal('replay'),
  replayed: z.number().int().describe('How many events are delivered again (at most 10,000 per call).'),
  next_since: z
    .string()
    .nullable()
    .describe(
      'Null when every failed event since `since` was replayed; past the cap, the `since` of the next call (ISO 8601).',
    ),
});
export const WebhookTestEvent = z.strictObject({
  object: z.literal('webhook_event'),
  id: z.string().describe('The sample event, listed with the endpoint’s events.'),
  type: z.string(),
});
export const WebhookAttemptList = ListEnvelope(
  z.strictObject({
    id: Id,
    http_status_code: z.number().int().nullable(),
    response: NullableString,
    sent_at: Timestamp,
    error: z.string().optional(),
    replay: z.boolean(),
  }),
);

// ---- DMARC aggregate reports (a Postline extension) ------------------------------------------------------
const DmarcCounts = {
  messages: z.number().int(),
  dmarc_pass: z.number().int().describe('Messages with DKIM or SPF aligned and passing.'),
  dmarc_fail: z.number().int(),
  spf_aligned: z.number().int(),
  dkim_aligned: z.number().int(),
};
export const DmarcReports = z.strictObject({
  object: z.literal('dmarc_reports'),
  domain_id: Id,
  domain: z.string(),
  from: IsoTimestamp,
  to: IsoTimestamp,
  report_address: z.string().describe('Where reporters send this domain’s aggregate reports (`rua=mailto:…`).'),
  suggested_record: z
    .strictObject({ name: z.string(), type: z.literal('TXT'), value: z.string() })
    .describe('The DMARC record to publish: monitoring only (`p=none`), reports sent to `report_address`.'),
  totals: z.strictObject({ ...DmarcCounts, reports: z.number().int() }),
  days: z.array(z.strictObject({ date: z.string().describe('UTC day of the reports’ begin.'), ...DmarcCounts })),
  sources: z
    .array(
      z.strictObject({
        source_ip: z.string(),
        ...DmarcCounts,
        failing: z.boolean().describe('Some of its messages failed DMARC: a source sending as the domain unaligned.'),
        header_from: z.array(z.string()),
        org_names: z.array(z.string()),
      }),
    )
    .describe('The sources with most messages first, at most 200.'),
  organizations: z
    .array(z.strictObject({ org_name: z.string(), reports: z.number().int(), ...DmarcCounts }))
    .describe('The reporting organisations, most messages first, at most 100.'),
  reports: z
    .array(
      z.strictObject({
        id: Id,
        org_name: z.string(),
        org_email: z.string(),
        report_id: z.string(),
        format: z.enum(['rfc9990', 'rfc7489']),
        begin: IsoTimestamp,
        end: IsoTimestamp,
        received_at: IsoTimestamp,
        policy_domain: z.string(),
        policy: z.strictObject({
          domain: z.string(),
          p: z.string(),
          sp: NullableString,
          np: NullableString,
          adkim: NullableString,
          aspf: NullableString,
          pct: z.number().int().nullable(),
          testing: NullableString,
          fo: NullableString,
          discovery_method: NullableString,
        }),
        errors: z.array(z.string()),
        records: z.number().int(),
        messages: z.number().int(),
        dmarc_pass: z.number().int(),
        dmarc_fail: z.number().int(),
      }),
    )
    .describe('The period’s reports, the latest first, at most 100.'),
});

// ---- Domain claims -------------------------------------------------------------------------------------
export const DomainClaim = z.strictObject({
  object: z.literal('domain_claim'),
  id: Id,
  name: z.string(),
  // Postline keeps no grace period for the previous owner: a claim is never `blocked`.
  status: z.enum(['pending', 'verified', 'completed', 'expired', 'superseded', 'canceled', 'failed']),
  domain_id: Id.describe('The id the domain has under the claiming team once the claim completes.'),
  region: z.string(),
  record: z
    .strictObject({ type: z.literal('TXT'), name: z.string(), value: z.string(), ttl: z.string() })
    .describe('The TXT record to publish at the domain’s name: `postline-domain-verification=<48 hex>`.'),
  blocked_reason: z.null().describe('Always null: claims are never blocked.'),
  failure_reason: NullableString,
  created_at: Timestamp,
  expires_at: Timestamp,
});

/** A team's or a domain's pause by the reputation guard; null when it is sending. */
const ReputationPause = z
  .strictObject({
    reason: z.enum(['bounce_rate', 'complaint_rate']),
    sends: z.number().int(),
    bounce_rate: z.number(),
    complaint_rate: z.number(),
    paused_at: Timestamp,
    message: z.string().describe('Why sending is paused and how to resume it (the message of `sending_paused`).'),
  })
  .nullable();
const ReputationWindow = {
  sends: z.number().int().describe('Delivered and bounced recipients in the window (its last sends).'),
  bounces: z.number().int(),
  complaints: z.number().int(),
  bounce_rate: z.number().describe('Hard bounces over sends, a fraction (0.04 = 4%).'),
  complaint_rate: z.number().describe('Complaints over sends, a fraction (0.0008 = 0.08%).'),
  paused: ReputationPause,
};
export const Reputation = z.strictObject({
  object: z.literal('reputation'),
  thresholds: z
    .strictObject({
      bounce_rate: z.number().describe('The bounce line in force for the team, a fraction (0.04 = 4%).'),
      complaint_rate: z.number().describe('The complaint line in force for the team, a fraction.'),
      window: z.number().int().describe('The window: the last this many sends.'),
      min_sends: z.number().int().describe('A window is judged once it holds this many sends.'),
      set_for_team: z
        .array(z.enum(REPUTATION_THRESHOLD_NAMES))
        .describe('The lines the operator set for this team; the others are the install’s.'),
    })
    .describe('The lines in force for the team: the install’s, or those the operator set for it.'),
  team: z.strictObject(ReputationWindow),
  domains: z.array(z.strictObject({ id: Id, name: z.string(), ...ReputationWindow })),
});

/** One sender process's traffic shaping of a provider, or the install's (its processes' together). */
const ShapingFigures = {
  state: z
    .enum(['normal', 'slowed', 'held'])
    .describe(
      '`held`: deliveries to the provider wait until `held_until`; `slowed`: its rate is below the limit after it pushed back; `normal`: sending at the limit.',
    ),
  reason: z
    .string()
    .nullable()
    .describe(
      'The provider’s reply that caused the slowdown or hold (`421 4.7.28 …`), with any address and any text in angle brackets replaced by `…` (the reply was given for another team’s recipient or sender); null when normal.',
    ),
  held_until: IsoTimestamp.nullable().describe('When the hold is expected to end; null when not held.'),
  rate_per_minute: z
    .number()
    .describe('Messages a minute allowed now: the limit, halved on each pushback, given back as deliveries succeed.'),
  limit_per_minute: z.number().describe('The configured messages a minute.'),
  connections: z.number().int().describe('SMTP sessions open to the provider now.'),
  max_connections: z.number().int(),
  deferrals_in_a_row: z
    .number()
    .int()
    .describe('Deferrals by the provider in a row since its last delivery (enough of them count as a pushback).'),
};
export const ProviderShaping = z.strictObject({
  object: z.literal('provider_shaping'),
  providers: z
    .array(
      z.strictObject({
        provider: z.enum(['gmail', 'microsoft', 'yahoo', 'apple']),
        ...ShapingFigures,
        limits: z
          .strictObject({
            messages_per_minute: z.number(),
            max_connections: z.number().int(),
            max_messages_per_connection: z.number().int(),
          })
          .describe('The limits of one sender process (SHAPING_CONFIG): each process shapes its own share.'),
        replicas: z
          .array(
            z.strictObject({
              process_id: z
                .string()
                .describe(
                  'A short id of the sender process, new at each start: two processes of one name (a container restarted) differ by it.',
                ),
              replica: z.string().describe('The sender process: its host name and process id.'),
              sending_ip: z
                .string()
                .nullable()
                .describe(
                  'The local address of the process’s latest SMTP session to any provider (one per process, not per provider); null before its first session.',
                ),
              ...ShapingFigures,
              updated_at: IsoTimestamp,
            }),
          )
          .describe('Each running sender process’s own state, the worst first.'),
        updated_at: IsoTimestamp,
      }),
    )
    .describe(
      'The named mailbox providers the running sender processes have sent to lately, the held first, then the slowed. The state is the worst of the processes’, `held_until` the last of their holds to end; rates, limits and connections are summed over them.',
    ),
  other_mail_servers: z
    .strictObject({
      slowed: z.number().int().describe('Other mail servers (MX domains) slowed now.'),
      held: z.number().int().describe('Other mail servers held now.'),
      held_until_earliest: IsoTimestamp.nullable().describe('The first of their holds to end; null when none is held.'),
      held_until_latest: IsoTimestamp.nullable().describe('The last of their holds to end; null when none is held.'),
      reason: z
        .string()
        .nullable()
        .describe('The reply codes alone of the worst one’s reply (`450 4.7.1`); null when none is slowed or held.'),
    })
    .describe(
      'Every other mail server, counted, never named (they are other teams’ recipients’ companies). Counted per sender process and summed: one slowed by two processes counts twice.',
    ),
});
