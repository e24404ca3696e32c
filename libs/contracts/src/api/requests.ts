import { z } from 'zod';
import { isSubdomainLabel } from '../dns-names.ts';
import { PublicEventType, SuppressionOrigin } from '../events.ts';
import { PROPERTY_KEY } from '../resource-values.ts';
import { PaginationQuery } from '../pagination.ts';
import { CONTACT_IMPORT_FIELDS } from '../import-headers.ts';

// The request bodies and query parameters of the public API: the schemas the owners validate with
// (`parseInput`), so that what the OpenAPI document says is what is checked. Unknown keys are ignored and,
// where a field is `nullish`, null means "not given", as the SDKs send both.

export { PaginationQuery };
export { CreateFormBody, FormConfirmation, FormSubmission, UpdateFormBody } from './form-requests.ts';

/**
 * An ISO 8601 timestamp with `Z` or an offset, whose seconds may be left out (`2026-11-01T10:00Z` is 10:00:00),
 * as `scheduled_at` reads one. zod's own pattern for an offset requires the seconds (RFC 3339's profile); the
 * API has always taken the shorter form, so the pattern here keeps it.
 */
function isoTimestamp(message?: string) {
  const date = z.regexes.date.source.slice(1, -1);
  const time = '(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?';
  const pattern = new RegExp(`^${date}T${time}(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$`);
  // `pattern` is zod's own field for a format's pattern, left out of the parameters' type.
  const params = { offset: true, pattern, ...(message === undefined ? {} : { message }) };
  return z.iso.datetime(params as Parameters<typeof z.iso.datetime>[0]);
}

const Addresses = z.union([z.string(), z.array(z.string())]);

// ---- Emails --------------------------------------------------------------------------------------------
export { BatchEmailsBody, SendEmailBody } from './send-email-body.ts';

/** PATCH /emails/{id}: ISO 8601 as documented; natural language is accepted as on create. */
export const RescheduleEmailBody = z.object({ scheduled_at: z.string({ message: 'must be a date string' }) });
export const ShareEmailBody = z.object({
  expires_in: z.unknown().optional().meta({ description: 'Postline extension: seconds the link lives.' }),
});

export const ReceivedEmailQuery = z.object({
  html_format: z
    .enum(['data_uri', 'cid'], { message: 'The `html_format` parameter must be `data_uri` or `cid`.' })
    .optional(),
});

/**
 * GET /domains/{id}/dmarc-reports (a Postline extension): the reports whose period begins in [from, to), as
 * ISO 8601 dates or timestamps; by default the last 30 days. At most 366 days.
 */
export const DmarcReportQuery = z.object({
  from: z.iso
    .date()
    .or(isoTimestamp())
    .optional()
    .meta({ description: 'Start (inclusive), e.g. `2026-11-01`; default: 30 days before `to`.' }),
  to: z.iso
    .date()
    .or(isoTimestamp())
    .optional()
    .meta({ description: 'End (exclusive), e.g. `2026-12-01`; default: now.' }),
});

// ---- Domains -------------------------------------------------------------------------------------------
const Tls = z.enum(['opportunistic', 'enforced'], { message: 'must be "opportunistic" or "enforced"' });
const CapabilityField = z.enum(['enabled', 'disabled']).nullish();
const Label = z
  .string()
  .refine(
    isSubdomainLabel,
    'must be a subdomain label such as `send` (letters, digits, inner hyphens; at most 63 characters)',
  )
  .describe('A subdomain label such as `send`.');
const TrackingSubdomain = z.union([z.literal(''), Label]);
const DomainCapabilitiesInput = z.object({ sending: CapabilityField, receiving: CapabilityField }).nullish();
export const CreateDomainBody = z.object({
  name: z.string(),
  region: z.string().nullish(),
  custom_return_path: Label.nullish(),
  open_tracking: z.boolean().nullish(),
  click_tracking: z.boolean().nullish(),
  tracking_subdomain: TrackingSubdomain.nullish(),
  tls: Tls.nullish(),
  capabilities: DomainCapabilitiesInput,
});
export const UpdateDomainBody = z.object({
  open_tracking: z.boolean().nullish(),
  click_tracking: z.boolean().nullish(),
  tracking_subdomain: TrackingSubdomain.nullish(),
  tls: Tls.nullish(),
  capabilities: DomainCapabilitiesInput,
});
/** POST /domains/claim: the create body's name and settings (Resend's CreateDomainClaimRequest). */
export const ClaimDomainBody = CreateDomainBody.pick({
  name: true,
  region: true,
  custom_return_path: true,
  open_tracking: true,
  click_tracking: true,
  tracking_subdomain: true,
});

// ---- API keys ------------------------------------------------------------------------------------------
const KeyName = z
  .string()
  .max(50, 'The name must be at most 50 characters.')
  .refine((name) => !name.includes('\u0000'), 'The name must not contain NUL characters.');
export const CreateApiKeyBody = z.object({
  name: KeyName,
  // Checked by the route, which answers `invalid_access` for another value.
  permission: z
    .unknown()
    .optional()
    .meta({ type: 'string', enum: ['full_access', 'sending_access'], default: 'full_access' }),
  domain_id: z.string().nullish(),
  expires_at: isoTimestamp('must be an ISO 8601 timestamp')
    .nullish()
    .describe('Postline extension: when the key stops working (ISO 8601, in the future); never when absent.'),
});
export const UpdateApiKeyBody = z.object({ name: KeyName });

// ---- Logs ----------------------------------------------------------------------------------------------
const QueryTime = isoTimestamp('must be an ISO 8601 timestamp');
// Postgres refuses NUL in text: a 422 here, never a 500 there.
const QueryText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters');
/** Postline extensions: the filters of GET /logs, each narrowing the list (all together). */
export const LogFilterQuery = z.object({
  status: z
    .string()
    .regex(/^([1-5][0-9][0-9]|[1-5]xx)$/, 'must be a status code such as `404`, or a class such as `4xx`')
    .optional()
    .describe('Postline extension: a response status (`429`) or a class (`2xx`, `4xx`, `5xx`).'),
  method: z
    .enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], { message: 'must be GET, POST, PUT, PATCH or DELETE' })
    .optional()
    .describe('Postline extension: the request method.'),
  endpoint: QueryText(500)
    .regex(/^\//, 'must be a path starting with `/`')
    .optional()
    .describe('Postline extension: a path prefix (`/emails` matches `/emails/batch`).'),
  api_key_id: z.uuid({ message: 'must be an API key id' }).optional().describe('Postline extension: the API key.'),
  user_agent: QueryText(500).optional().describe('Postline extension: a part of the user agent (any case).'),
  created_after: QueryTime.optional().describe('Postline extension: logged at or after this time.'),
  created_before: QueryTime.optional().describe('Postline extension: logged before this time.'),
});
export type LogFilterQuery = z.infer<typeof LogFilterQuery>;

/** The events an email's `last_event` takes. */
export const EMAIL_LAST_EVENTS = [
  'queued',
  'scheduled',
  'canceled',
  'sent',
  'delivered',
  'delivery_delayed',
  'bounced',
  'failed',
  'suppressed',
  'complained',
  'opened',
  'clicked',
] as const;

/** Postline extensions: the filters of GET /emails, each narrowing the list (all together). */
export const EmailFilterQuery = z.object({
  last_event: z
    .enum(EMAIL_LAST_EVENTS, { message: `must be one of ${EMAIL_LAST_EVENTS.join(', ')}` })
    .optional()
    .describe('Postline extension: the email’s last event.'),
  from: QueryText(320).optional().describe('Postline extension: the sender’s address (any case).'),
  to: QueryText(320).optional().describe('Postline extension: a recipient’s address, in to, cc or bcc (any case).'),
  subject: QueryText(200).optional().describe('Postline extension: a part of the subject (any case).'),
  tag: QueryText(512)
    .regex(/^[^=]+(=.*)?$/, 'must be a tag name, or `name=value`')
    .optional()
    .describe('Postline extension: a tag the email carries: `name=value`, or `name` with any value.'),
  domain_id: z.uuid({ message: 'must be a domain id' }).optional().describe('Postline extension: the sending domain.'),
  broadcast_id: z
    .uuid({ message: 'must be a broadcast id' })
    .optional()
    .describe('Postline extension: the broadcast that made the email.'),
  api_key_id: z
    .uuid({ message: 'must be an API key id' })
    .optional()
    .describe('Postline extension: the API key the email was sent with.'),
  created_after: QueryTime.optional().describe('Postline extension: accepted at or after this time.'),
  created_before: QueryTime.optional().describe('Postline extension: accepted before this time.'),
});
export type EmailFilterQuery = z.infer<typeof EmailFilterQuery>;

/** GET /dev-inbox/messages: a part of the subject, the sender or a recipient (any case). */
export const DevInboxQuery = z.object({
  q: QueryText(320).optional().describe('A part of the subject, the From address or a recipient (any case).'),
});
export type DevInboxQuery = z.infer<typeof DevInboxQuery>;

/** The counted metrics of GET /emails/metrics (Resend's names, and Postline's people/machines split). */
export const EMAIL_COUNT_METRICS = [
  'received',
  'sent',
  'delivered',
  'delivery_delayed',
  'bounced',
  'bounced_permanent',
  'bounced_transient',
  'bounced_undetermined',
  'complained',
  'opened',
  'opened_by_people',
  'opened_by_machines',
  'unique_opened',
  'clicked',
  'clicked_by_people',
  'clicked_by_scanners',
  'unique_clicked',
  'unsubscribed',
  'suppressed',
  'failed',
] as const;
/** Rates: delivered, bounced per sent; complained, opened and clicked by people per delivered. */
export const EMAIL_RATE_METRICS = [
  'delivery_rate',
  'bounce_rate',
  'complaint_rate',
  'open_rate',
  'click_rate',
  'unsubscribe_rate',
] as const;
export const EMAIL_METRICS = [...EMAIL_COUNT_METRICS, ...EMAIL_RATE_METRICS] as const;
export type EmailMetric = (typeof EMAIL_METRICS)[number];
export const METRIC_DIMENSIONS = ['period', 'domain', 'email', 'broadcast', 'provider'] as const;
export const METRIC_GRANULARITIES = ['hourly', 'daily', 'weekly', 'monthly'] as const;

/** A comma-separated list of `values` (each at most once). */
function commaList<const T extends readonly [string, ...string[]]>(values: T, what: string) {
  return z.string().transform((text, ctx): T[number][] => {
    const parts = [
      ...new Set(
        text
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean),
      ),
    ];
    const unknown = parts.filter((part) => !values.includes(part));
    if (parts.length === 0 || unknown.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `each ${what} must be one of ${values.join(', ')}${unknown.length ? ` (not ${unknown.join(', ')})` : ''}`,
      });
      return z.NEVER;
    }
    return parts as T[number][];
  });
}
const CommaIds = (what: string) =>
  z.string().transform((text, ctx): string[] => {
    const ids = [
      ...new Set(
        text
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean),
      ),
    ];
    if (ids.length === 0 || ids.length > 100 || !ids.every((id) => z.uuid().safeParse(id).success)) {
      ctx.addIssue({ code: 'custom', message: `must be 1 to 100 ${what} ids, separated by commas` });
      return z.NEVER;
    }
    return ids;
  });
const MetricDate = z.union([z.iso.date(), isoTimestamp()], {
  message: 'must be an ISO 8601 date (YYYY-MM-DD) or date and time',
});

export const EmailMetricsQuery = z
  .object({
    start_date: MetricDate.optional().describe(
      'From this day (in `timezone`) or this instant (default: 6 days before end_date).',
    ),
    end_date: MetricDate.optional().describe(
      'Up to the end of this day (in `timezone`) or this instant (default: now).',
    ),
    timezone: z
      .string()
      .max(64)
      .refine((zone) => {
        // A name, never an offset (`+05:30`): a database reads an offset string with its sign inverted.
        if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone)) return false;
        try {
          new Intl.DateTimeFormat('en', { timeZone: zone });
          return true;
        } catch {
          return false;
        }
      }, 'must be an IANA time zone such as Europe/Paris')
      .optional()
      .describe('IANA time zone the days and periods are counted in (default UTC).'),
    granularity: z
      .enum(METRIC_GRANULARITIES, { message: `must be one of ${METRIC_GRANULARITIES.join(', ')}` })
      .optional()
      .describe('Period length (default daily); weeks start on Monday.'),
    metrics: commaList(EMAIL_METRICS, 'metric').optional().describe('Comma-separated metric names (default: all).'),
    dimensions: commaList(METRIC_DIMENSIONS, 'dimension')
      .optional()
      .describe(
        'Comma-separated: how `data` is split (default: none, only `totals`). `provider` is a Postline extension.',
      ),
    domain_id: CommaIds('domain').optional(),
    email_id: CommaIds('email').optional(),
    broadcast_id: CommaIds('broadcast').optional(),
  })
  .refine((q) => !q.start_date || !q.end_date || Date.parse(q.start_date) <= Date.parse(q.end_date), {
    message: 'start_date must not be after end_date',
    path: ['start_date'],
  })
  .refine(
    (q) =>
      !((q.dimensions?.includes('broadcast') || q.broadcast_id) && (q.dimensions?.includes('email') || q.email_id)),
    {
      message: 'the broadcast dimension or broadcast_id cannot be combined with the email dimension or email_id',
      path: ['dimensions'],
    },
  )
  .refine((q) => !q.dimensions?.includes('email') || q.email_id !== undefined, {
    message: 'the email dimension needs email_id (the emails to split by)',
    path: ['email_id'],
  });
export type EmailMetricsQuery = z.infer<typeof EmailMetricsQuery>;

// ---- Templates -----------------------------------------------------------------------------------------
export const TEMPLATE_NAME_MAX = 255;
const TemplateName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(TEMPLATE_NAME_MAX, `must be at most ${TEMPLATE_NAME_MAX} characters`);
const TemplateHtml = z.string().min(1, 'must not be empty');
export const TemplateVariables = z.array(
  z.object({
    key: z.string(),
    type: z.string(),
    fallback_value: z.unknown().optional(),
    fallbackValue: z.unknown().optional().meta({ description: 'Accepted for `fallback_value`.', deprecated: true }),
  }),
);
const TemplateFields = {
  alias: z.string().nullish(),
  from: z.string().nullish(),
  subject: z.string().nullish(),
  reply_to: Addresses.nullish(),
  text: z.string().nullish(),
  variables: TemplateVariables.nullish(),
};
export const CreateTemplateBody = z.object({ name: TemplateName, html: TemplateHtml, ...TemplateFields });
export const UpdateTemplateBody = z.object({
  name: TemplateName.nullish(),
  html: TemplateHtml.nullish(),
  ...TemplateFields,
});

// ---- Audience ------------------------------------------------------------------------------------------
const Subscription = z.enum(['opt_in', 'opt_out']);
const ContactFields = {
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  unsubscribed: z.boolean().nullish(),
  // Checked against the team's contact properties by the use case.
  properties: z
    .unknown()
    .optional()
    .meta({
      type: 'object',
      additionalProperties: { type: ['string', 'number', 'null'] },
      description: 'Values of the contact properties, by key.',
    }),
};
export const CreateContactBody = z.object({
  email: z.string(),
  ...ContactFields,
  segments: z.array(z.union([z.string(), z.object({ id: z.string() }).transform((segment) => segment.id)])).nullish(),
  topics: z.array(z.object({ id: z.string(), subscription: Subscription })).nullish(),
  audience_id: z.string().nullish(),
});
export const AudienceContactBody = z.object({ email: z.string(), ...ContactFields });
export const UpdateContactBody = z.object({ email: z.string().nullish(), ...ContactFields });
export const ContactListQuery = z.object({
  segment_id: z.string().optional(),
  q: QueryText(320)
    .optional()
    .describe('Postline extension: a part of the email address or of the first or last name (any case).'),
  unsubscribed: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .optional()
    .describe('Postline extension: only the contacts unsubscribed from every broadcast (true), or only the others.'),
  topic_id: z
    .string()
    .optional()
    .describe(
      "Postline extension: only the contacts whose subscription to this topic (their choice, else the topic's default) is `topic_subscription`.",
    ),
  topic_subscription: Subscription.optional().describe('Postline extension: with `topic_id`; `opt_in` unless given.'),
});
export type ContactListQuery = z.infer<typeof ContactListQuery>;
/** The segment, topic and contact property lists' `counts` flag (Postline extension). */
export const AudienceCountsQuery = z.object({
  counts: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .optional()
    .describe('Postline extension: with `true`, each item also says how many contacts it holds.'),
});

const SegmentName = z.string().trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
export const CreateSegmentBody = z
  .object({
    name: SegmentName,
    filter: z.unknown().optional().meta({ description: 'Not supported: only `null` is accepted.' }),
  })
  .refine((body) => body.filter === undefined || body.filter === null, 'Segment filters are not supported.');
export const RenameSegmentBody = z.object({ name: SegmentName });

export const TOPIC_NAME_MAX = 50;
export const TOPIC_DESCRIPTION_MAX = 200;
const TopicName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(TOPIC_NAME_MAX, `must be at most ${TOPIC_NAME_MAX} characters`);
const TopicDescription = z
  .string()
  .max(TOPIC_DESCRIPTION_MAX, `must be at most ${TOPIC_DESCRIPTION_MAX} characters`)
  .nullish();
const Visibility = z.enum(['public', 'private']);
export const CreateTopicBody = z.object({
  name: TopicName,
  default_subscription: z.string().pipe(Subscription),
  description: TopicDescription,
  visibility: Visibility.nullish(),
});
export const UpdateTopicBody = z.object({
  name: TopicName.optional(),
  description: TopicDescription,
  visibility: Visibility.optional(),
  default_subscription: Subscription.optional(),
});
/** PATCH /contacts/{id}/topics: a bare array of choices (what the SDK sends), or `{ topics }`. */
export const ContactTopicChoices = z.array(z.object({ id: z.string(), subscription: Subscription }));
export const ContactTopicChoicesObject = z.object({ topics: ContactTopicChoices });
export const UpdateContactTopicsBody = z.union([ContactTopicChoices, ContactTopicChoicesObject]);

const PropertyType = z.enum(['string', 'number']);
const FallbackValue = z.union([z.string(), z.number(), z.null()]).optional();
export const CreateContactPropertyBody = z.object({
  key: z.string(),
  type: z.string().pipe(PropertyType),
  fallback_value: FallbackValue,
});
export const UpdateContactPropertyBody = z.object({
  key: z.string().optional(),
  type: PropertyType.optional(),
  fallback_value: FallbackValue,
});

/** The contact fields a CSV import fills, and the one each column fills by its name. */
export { CONTACT_IMPORT_FIELDS, importFieldOfHeader } from '../import-headers.ts';
const MAX_IMPORT_SEGMENTS = 100;
const MAX_IMPORT_TOPICS = 100;
const Column = z.string().trim().min(1, 'must name a column');
/** A property's column: the SDK's `{column, type}`, or the column alone. */
const PropertyColumn = z.union([
  Column.transform((column) => ({ column })),
  z.object({ column: Column, type: z.string().optional() }),
]);
/**
 * `column_map`: contact field → column, properties under `properties` (as the SDK sends them) or, flat, any
 * other key that is a property key.
 */
export const ContactImportColumnMap = z
  .object({
    email: Column.nullish(),
    first_name: Column.nullish(),
    last_name: Column.nullish(),
    unsubscribed: Column.nullish(),
    properties: z.record(z.string(), PropertyColumn).nullish(),
  })
  .catchall(z.union([Column, z.null()]))
  .superRefine((map, ctx) => {
    const flat = Object.keys(map).filter(
      (key) => key !== 'properties' && !(CONTACT_IMPORT_FIELDS as readonly string[]).includes(key),
    );
    for (const key of [...flat, ...Object.keys(map.properties ?? {})]) {
      if (!PROPERTY_KEY.test(key))
        ctx.addIssue({ code: 'custom', message: `\`${key}\` is not a contact field nor a property key.`, path: [key] });
    }
  });
const ImportSegmentRef = z
  .union([z.string(), z.object({ id: z.string() })])
  .transform((ref) => (typeof ref === 'string' ? ref : ref.id));
// A string first, so that a subscription left out is a missing field rather than a wrong value.
const ImportTopicRef = z.object({ id: z.string(), subscription: z.string().pipe(Subscription) });

function contentSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    unrepresentable: 'any',
  });
  return rest;
}

/**
 * A multipart form field holding JSON: decoded, then checked with `schema`. Left out or blank, it is not
 * given. The document shows it as a string whose content is `schema` (JSON Schema's `contentSchema`).
 */
function jsonField<T extends z.ZodType>(schema: T, kind: 'object' | 'array', description: string) {
  return z
    .string()
    .optional()
    .transform((text, ctx): unknown => {
      if (text === undefined || text.trim() === '') return undefined;
      try {
        return JSON.parse(text);
      } catch {
        ctx.addIssue({ code: 'custom', message: `it must be a JSON-encoded ${kind}.` });
        return z.NEVER;
      }
    })
    .pipe(schema)
    .meta({
      description,
      contentMediaType: 'application/json',
      contentSchema: contentSchemaOf(schema),
    });
}

/**
 * POST /contacts/imports, multipart/form-data: the file, and JSON-encoded form fields. The route checks
 * the `file` part is there (a missing field) and parses the form with this schema.
 */
export const ContactImportForm = z.object({
  file: z
    .custom<Uint8Array>((value) => value instanceof Uint8Array)
    .meta({ type: 'string', contentMediaType: 'text/csv', description: 'The CSV file, with a header row.' }),
  column_map: jsonField(
    ContactImportColumnMap.optional(),
    'object',
    'JSON object: contact field or property key → CSV column (default: columns named like them).',
  ),
  on_conflict: z.enum(['upsert', 'skip']).default('skip'),
  segments: jsonField(
    z.array(ImportSegmentRef).max(MAX_IMPORT_SEGMENTS).default([]),
    'array',
    'JSON array of segment ids (or `{ id }`) every imported contact joins.',
  ),
  topics: jsonField(
    z.array(ImportTopicRef).max(MAX_IMPORT_TOPICS).default([]),
    'array',
    'JSON array of `{ id, subscription }` set on every imported contact.',
  ),
});
export type ContactImportColumnMap = z.output<typeof ContactImportColumnMap>;
export const ContactImportListQuery = z.object({
  status: z.enum(['queued', 'in_progress', 'completed', 'failed']).optional(),
});

// ---- Broadcasts ----------------------------------------------------------------------------------------
export const UpdateBroadcastBody = z.object({
  name: z.string().max(255, 'must be at most 255 characters').nullish(),
  segment_id: z.string().nullish(),
  audience_id: z.string().nullish().meta({ description: 'Deprecated: the same as `segment_id`.', deprecated: true }),
  from: z.string().nullish(),
  subject: z.string().nullish(),
  reply_to: Addresses.nullish(),
  preview_text: z.string().max(1000, 'must be at most 1000 characters').nullish(),
  html: z.string().nullish(),
  text: z.string().nullish(),
  topic_id: z.string().nullish(),
});
export const CreateBroadcastBody = UpdateBroadcastBody.extend({
  send: z.boolean().nullish(),
  scheduled_at: z.string().nullish(),
});
export const SendBroadcastBody = z.object({ scheduled_at: z.string().nullish() });
export const BroadcastRecipientType = z.enum([
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'unsubscribed',
  'suppressed',
]);
/** The clicked links' paging: their ids are 32 hex digits (a hash of the URL), not UUIDs. */
const LinkCursor = z
  .string()
  .regex(/^[0-9a-f]{32}$/, 'The cursor must be a valid id.')
  .optional();
export const BroadcastClickedLinksQuery = z
  .object({ limit: PaginationQuery.shape.limit, after: LinkCursor, before: LinkCursor })
  .refine((q) => !(q.after !== undefined && q.before !== undefined), {
    message: 'The `after` and `before` parameters cannot be used together.',
  });
/** GET /broadcasts: Postline's filter by status. */
export const BroadcastListQuery = z.object({
  status: z
    .enum(['draft', 'scheduled', 'queued', 'sent', 'canceled', 'awaiting_approval'], {
      message: 'must be draft, scheduled, queued, sent, canceled or awaiting_approval',
    })
    .optional()
    .describe('Postline extension: only the broadcasts in this status.'),
});
export const BroadcastRecipientsQuery = z.object({
  type: BroadcastRecipientType,
  email: z.string().optional(),
  bounce_type: z.enum(['permanent', 'transient', 'undetermined']).optional(),
});

/** GET /broadcasts/{id}/preview: the contact the broadcast is shown as, by id or by email address. */
export const BroadcastPreviewQuery = z
  .object({
    contact_id: z.string().optional().describe('The contact to show it as.'),
    email: z.string().optional().describe('The contact to show it as, by email address (instead of `contact_id`).'),
  })
  .refine((q) => q.contact_id !== undefined || q.email !== undefined, {
    message: 'Give `contact_id` or `email`: the contact to show the broadcast as.',
  });
export const BroadcastTestBody = z.object({
  to: z
    .union([z.string(), z.array(z.string()).min(1, 'must name an address').max(10, 'must have at most 10 addresses')])
    .describe('Where the test copies go (up to 10 addresses), one copy each.'),
  contact_id: z
    .string()
    .nullish()
    .describe('The contact whose properties and unsubscribe link fill the copies; without it, the fallbacks.'),
});
export const RejectBroadcastBody = z.object({
  reason: z.string().max(1000, 'must be at most 1000 characters').nullish().describe('Why, for the member who asked.'),
});
export const UpdateBroadcastSettingsBody = z.object({
  require_approval: z
    .boolean()
    .optional()
    .describe('Whether a member’s broadcast waits for an admin’s approval before it is sent or scheduled.'),
});

// ---- Suppressions --------------------------------------------------------------------------------------
const SuppressedEmail = z
  .string()
  .max(320)
  .regex(/^[^\s@<>()[\],;:"\\]+@[^\s@<>()[\],;:"\\]+\.[^\s@<>()[\],;:"\\]+$/, 'must be an email address');
export const AddSuppressionBody = z.object({ email: SuppressedEmail });
export const BatchAddSuppressionsBody = z.object({ emails: z.array(SuppressedEmail).min(1).max(100) });
export const BatchRemoveSuppressionsBody = z.object({
  emails: z.array(SuppressedEmail).min(1).max(100).nullish(),
  ids: z.array(z.string()).min(1).max(100).nullish(),
});
export const SuppressionListQuery = z.object({ origin: SuppressionOrigin.optional() });

// ---- Webhooks ------------------------------------------------------------------------------------------
const Events = z.array(z.string(), { message: 'The `events` field must be an array of event names.' });
export const CreateWebhookBody = z.object({ endpoint: z.string(), events: Events });
export const UpdateWebhookBody = z.object({
  endpoint: z.string().nullish(),
  events: Events.nullish(),
  status: z.enum(['enabled', 'disabled'], { message: 'must be "enabled" or "disabled"' }).nullish(),
});
/**
 * Event and attempt lists page with `after` (older items) or `before` (newer items): the id of an event
 * (`msg_`) or attempt (`atmpt_`); both together are refused, as on every list.
 */
function cursorFields(prefix: 'msg' | 'atmpt') {
  const cursor = z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9a-f]{32}$`), 'The cursor must be a valid id.')
    .optional();
  return { limit: PaginationQuery.shape.limit, after: cursor, before: cursor };
}
const oneCursor = [
  (q: { after?: string; before?: string }) => !(q.after !== undefined && q.before !== undefined),
  { message: 'The `after` and `before` parameters cannot be used together.' },
] as const;
export const WebhookEventPageQuery = z
  .object({
    ...cursorFields('msg'),
    status: z
      .enum(['pending', 'attempting', 'success', 'failed'], {
        message: 'The `status` parameter must be one of pending, attempting, success or failed.',
      })
      .optional()
      .meta({ description: 'Postline extension: only the events in this delivery state.' }),
  })
  .refine(...oneCursor);
export const WebhookAttemptPageQuery = z.object(cursorFields('atmpt')).refine(...oneCursor);
export const WebhookDeliveriesQuery = z.object({
  source_event_id: CommaIds('event').describe(
    'Comma-separated ids of the events (an email’s events are at GET /emails/{id}/events).',
  ),
});
/** The most events one bulk replay delivers again; a larger backlog takes several calls. */
export const WEBHOOK_REPLAY_MAX = 10_000;
export const ReplayWebhookEventsBody = z.object({
  since: isoTimestamp('must be an ISO 8601 timestamp').describe('Replays the events created at or after this time.'),
  status: z.literal('failed', { message: 'must be "failed"' }).describe('Only failed events are replayed.'),
});
export const TestWebhookBody = z.object({
  type: z
    .enum(PublicEventType.options, { message: 'must be one of the 19 event names' })
    .optional()
    .describe('The sample event to deliver (default `email.sent`).'),
});

// ---- Public links --------------------------------------------------------------------------------------
export const UnsubscribeForm = z.object({
  'List-Unsubscribe': z.string().optional().describe('`One-Click` (RFC 8058), or the preference form fields.'),
});

// ---- Dashboard (/dashboard-api) --------------------------------------------------------------------------
// Postgres refuses NUL and unpaired surrogates in text: a 422 here, never a 500 there.
const DashboardText = (max: number) =>
  z
    .string()
    .max(max, `Must be at most ${max} characters.`)
    .refine((v) => v.isWellFormed() && !v.includes('\u0000'), 'Must be valid text without NUL characters.');
const DashboardEmail = DashboardText(254).pipe(z.string().trim().email('The email address is invalid.'));
/** A new password: 10 to 200 characters. */
const DashboardPassword = DashboardText(200).refine(
  (v) => v.length >= 10,
  'The password must be at least 10 characters.',
);
const DashboardName = DashboardText(100).pipe(z.string().trim().min(1, 'Must not be empty.'));
const MemberRole = z.enum(['admin', 'member'], { message: 'The role must be "admin" or "member".' });
/** A single-use link's token (setup, invite, password reset). */
const LinkToken = DashboardText(100).describe('The token of the link.');

export const SignInBody = z.object({
  email: DashboardText(254),
  password: DashboardText(200),
  team_id: z.string().optional().describe('The team to act on; the first of the user’s teams when left out.'),
});
export const SwitchTeamBody = z.object({ team_id: z.string() });
export const ChangePasswordBody = z.object({ current_password: DashboardText(200), new_password: DashboardPassword });
export const SetupBody = z.object({
  token: LinkToken,
  email: DashboardEmail,
  name: DashboardName,
  password: DashboardPassword,
  team_name: DashboardName,
});
/** GET /dashboard-api/setup and GET /dashboard-api/invites/accept: the link's token, checked without using it. */
export const LinkTokenQuery = z.object({ token: z.string().describe('The token of the link.') });
/** GET /dashboard-api/audit-log's filters (with the pagination parameters). */
export const AuditLogQuery = z.object({
  action: DashboardText(100).optional().describe('A whole action (`api-keys.created`) or a family (`api-keys`).'),
  actor_id: z.string().optional().describe('The acting user or API key.'),
  target_id: DashboardText(200).optional(),
});
export const UpdateMemberBody = z.object({ role: MemberRole });
export const CreateInviteBody = z.object({ email: DashboardEmail, role: MemberRole.optional() });
export const AcceptInviteBody = z.object({
  token: LinkToken,
  name: DashboardName.optional().describe('Required when the invited address has no account yet.'),
  password: DashboardText(200).describe(
    'The account’s password when the address has one; else the new account’s (at least 10 characters).',
  ),
});
/** The password of an account made by accepting an invite, checked once the invite is known to make one. */
export const NewAccountPassword = z.object({ password: DashboardPassword });
export const CreatePasswordResetBody = z.object({ user_id: z.string() });
export const CompletePasswordResetBody = z.object({ token: LinkToken, password: DashboardPassword });
export const RequestPasswordResetBody = z.object({ email: DashboardEmail });

/** POST /reputation/resume: the sending domain to resume; without it, the team's own pause. */
export const ResumeSendingBody = z.object({
  domain_id: z
    .uuid()
    .optional()
    .describe('The paused sending domain to resume; omit it to resume the team’s sending as a whole.'),
});
