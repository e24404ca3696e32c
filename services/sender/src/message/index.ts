export { parseMailbox } from './domain/address.ts';
export {
  type EmailRequest,
  MAX_RECIPIENTS_PER_FIELD,
  type ParseEmailOptions,
  parseEmailRequest,
  parseTemplateReference,
  type TemplateReference,
  usesTemplate,
} from './domain/email-request.ts';
export { parseScheduledAt } from './domain/scheduled-at.ts';
export { bareAddress, domainOf, envelopeRecipients, groupByDomain } from './domain/envelope-recipients.ts';
export { isOnboardingSender, isSandboxAddress, isSandboxDomain, SANDBOX_DOMAINS } from './domain/sandbox-addresses.ts';
export { parseRawEmail, type RawEnvelope } from './domain/raw-email.ts';
export type { Refusal } from './domain/refusal.ts';
export {
  attachmentContentType,
  attachmentFilename,
  type ComposeInput,
  composeInputOf,
  composeMessage,
  toCrlf,
} from './mime/compose-email.ts';
export { preparedRawMessage, splitRawMessage } from './mime/raw-message.ts';
export { readRawMessage, UnreadableMessage } from './mime/raw-parse.ts';
export { refusalError } from './refusal-error.ts';
