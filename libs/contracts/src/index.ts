export { ErrorName, ErrorBody } from './errors.ts';
export { PaginationQuery, ListEnvelope, DEFAULT_PAGE_SIZE } from './pagination.ts';
export {
  EmailScheduled,
  EmailSent,
  EmailDelivered,
  EmailDeliveryDelayed,
  BounceType,
  BounceSubType,
  EmailBounced,
  EmailComplained,
  EmailOpened,
  EmailClicked,
  EmailSuppressed,
  EmailFailed,
  EmailReceived,
  ContactCreated,
  ContactUpdated,
  ContactDeleted,
  DomainStatus,
  DomainRecordStatus,
  Capability,
  DomainCapabilities,
  DomainEventRecord,
  DomainCreated,
  DomainUpdated,
  DomainDeleted,
  SuppressionOrigin,
  SuppressionAdded,
  SuppressionRemoved,
  PublicEventType,
  PUBLIC_EVENT_TYPES,
  publicEvents,
  type PublicEventData,
  PublicEventEnvelope,
  publicEventBody,
} from './events.ts';
export {
  MessageEnvelope,
  TimerSet,
  TimerCancel,
  DomainState,
  CheckDomain,
  DeliverWebhook,
  DeliverEmail,
  SendScheduledEmail,
  ExpireSuppression,
  EmailFeedback,
  UnsubscribeMail,
  WebhookDisabled,
  ReputationPaused,
  ReputationResumed,
  ReputationScope,
} from './messages.ts';
export {
  catalog,
  type Catalog,
  type RoutingKey,
  type MessageData,
  type Message,
  type ParseMessageResult,
  isRoutingKey,
  isPublicEvent,
  parseMessage,
} from './catalog.ts';
export { SERVICE_NAMES, type ServiceName } from './services.ts';
export {
  PROPERTY_KEY,
  type PropertyType,
  type Subscription,
  type TemplateVariable,
  type VariableType,
} from './resource-values.ts';
export {
  PUBLIC_LINK_GONE,
  PUBLIC_LINK_PATH,
  INBOUND_LINK_PATH,
  TRACKING_LINK_PATH,
  TRACKING_HOSTS_PATH,
  publicLinkIdentity,
  UNSUBSCRIBE_BODY_LIMIT_BYTES,
  UNSUBSCRIBE_LINK_PATH,
  unsubscribeLinkTeam,
  SIGNUP_CONFIRM_PATH,
  SIGNUP_FORM_PATH,
  signupFormPublicId,
  signupFormTeam,
} from './public-links.ts';
export {
  FORM_FIELDS,
  FORM_NAME_MAX,
  FORM_SUBJECT_MAX,
  FORM_TARGETS_MAX,
  FORM_THANK_YOU_MAX,
  type FormField,
} from './api/form-requests.ts';
export {
  CONTACT_IMPORT_BODY_LIMIT_BYTES,
  CONTACT_IMPORT_FILE_LIMIT_BYTES,
  ENVELOPE_FROM_HEADER,
  ENVELOPE_TO_HEADER,
  IDEMPOTENCY_KEY_LIFETIME_MS,
  RAW_EMAIL_BODY,
  rawBodyNeedsSlot,
  RELAY_ONLY_HEADERS,
  SEND_EMAIL_BODY,
} from './api-limits.ts';
export { DEFAULT_RETENTION_DAYS, MAX_RETENTION_DAYS, RetentionDays, TeamRetentionUpdate } from './retention.ts';
export {
  MAX_REPUTATION_WINDOW,
  REPUTATION_THRESHOLD_NAMES,
  ReputationRate,
  ReputationSends,
  TEAM_REPUTATION_PATH,
  TeamReputationThresholds,
  TeamReputationUpdate,
  type ReputationThresholdName,
} from './reputation-thresholds.ts';
export * as ApiRequests from './api/requests.ts';
export {
  EMAIL_COUNT_METRICS,
  EMAIL_METRICS,
  METRIC_DIMENSIONS,
  METRIC_GRANULARITIES,
  type EmailMetric,
} from './api/requests.ts';
export {
  CONTROL_CHARACTERS,
  FROM_FORMAT,
  MAX_ATTACHMENTS_BASE64_BYTES,
  MAX_BATCH_EMAILS,
  MAX_RECIPIENTS_PER_FIELD,
} from './api/send-email-body.ts';
export { DNS_LABEL, isSubdomainLabel, normalizeHostName } from './dns-names.ts';
export type { ApiShape, DashboardShape, ApiRequest } from './api/types.ts';
export { SANDBOX_DOMAINS } from './sandbox.ts';
