// Delivery status notifications (RFC 3464, in an RFC 6522 multipart/report): the fields of a message/delivery-status
// part, and how a failed recipient's Status and Diagnostic-Code are filed, with the same classification as
// our own MTA's replies (`classifyReply`), so a bounce that comes back later is filed as one at RCPT.
import type { EmailFeedback } from '@postline/contracts';
import { classifyReply, type BounceClass } from '@postline/platform/pure';
import { headerValue, parseHeaderBlock, type MimeHeader } from './multipart-report.ts';

export type DsnAction = 'failed' | 'delayed' | 'delivered' | 'relayed' | 'expanded';

/** One per-recipient group of a delivery-status part. */
export type DsnRecipient = {
  /** Final-Recipient's address (its `rfc822;` type removed), or null. */
  finalRecipient: string | null;
  /** Original-Recipient's address: the one we gave at RCPT (ORCPT), before any forwarding. */
  originalRecipient: string | null;
  /** Lower-case; null when absent or not one of RFC 3464's five. */
  action: DsnAction | null;
  /** The RFC 3463 status (`5.1.1`), or null when absent or malformed. */
  status: string | null;
  /** As given, unfolded (`smtp; 550 5.1.1 <a@b>: user unknown`). */
  diagnosticCode: string | null;
  remoteMta: string | null;
};

export type DeliveryStatus = {
  reportingMta: string | null;
  arrivalDate: string | null;
  originalEnvelopeId: string | null;
  recipients: DsnRecipient[];
};

/** The bounce an `internal.email.feedback` message carries. */
export type FeedbackBounce = NonNullable<EmailFeedback['bounce']>;

const ACTIONS = new Set<string>(['failed', 'delayed', 'delivered', 'relayed', 'expanded']);
const STATUS = /^([245])\.(\d{1,3})\.(\d{1,3})\b/;
/** A diagnostic is kept whole up to this many characters (it is a remote server's reply text). */
const MAX_DIAGNOSTIC_CHARS = 1000;

/**
 * The fields of a message/delivery-status part: the per-message group, then one group per recipient,
 * separated by empty lines. A group is a recipient's when it names a Final-Recipient or an Action (some
 * MTAs omit the empty line after the per-message fields, which are then read from the same group).
 */
export function parseDeliveryStatus(text: string): DeliveryStatus {
  const groups = text
    .split(/\r?\n(?:[ \t]*\r?\n)+/)
    .map(parseHeaderBlock)
    .filter((group) => group.length > 0);
  const perMessage = groups.find((group) => headerValue(group, 'reporting-mta') !== undefined) ?? groups[0] ?? [];
  const recipients = groups
    .filter(
      (group) => headerValue(group, 'final-recipient') !== undefined || headerValue(group, 'action') !== undefined,
    )
    .map(recipientOf);
  return {
    reportingMta: typed(headerValue(perMessage, 'reporting-mta')),
    arrivalDate: headerValue(perMessage, 'arrival-date') ?? null,
    originalEnvelopeId: headerValue(perMessage, 'original-envelope-id') ?? null,
    recipients,
  };
}

function recipientOf(group: MimeHeader[]): DsnRecipient {
  const action = headerValue(group, 'action')?.trim().toLowerCase().split(/[\s(]/)[0] ?? '';
  const status = STATUS.exec(headerValue(group, 'status')?.trim() ?? '');
  return {
    finalRecipient: address(headerValue(group, 'final-recipient')),
    originalRecipient: address(headerValue(group, 'original-recipient')),
    action: ACTIONS.has(action) ? (action as DsnAction) : null,
    status: status ? `${status[1]}.${Number(status[2])}.${Number(status[3])}` : null,
    diagnosticCode: headerValue(group, 'diagnostic-code')?.slice(0, MAX_DIAGNOSTIC_CHARS) ?? null,
    remoteMta: typed(headerValue(group, 'remote-mta')),
  };
}

/**
 * What a recipient group means: its Action, or, when an MTA left it out, what its Status class says (5 →
 * failed, 4 → delayed, 2 → delivered).
 */
export function effectiveAction(recipient: DsnRecipient): DsnAction | null {
  if (recipient.action) return recipient.action;
  const kind = recipient.status?.[0];
  return kind === '5' ? 'failed' : kind === '4' ? 'delayed' : kind === '2' ? 'delivered' : null;
}

/**
 * Files a failed recipient from its Status and Diagnostic-Code. The Status is the reporting MTA's verdict
 * and decides permanent vs transient (a `failed` with a 4.x.x status is a delivery that timed out: a
 * transient bounce) and, unless generic (x.0.0), the subtype; the diagnostic's reply code and text refine
 * it as they do for our own replies. Neither present: Undetermined.
 */
export function classifyDsnFailure(status: string | null, diagnosticCode: string | null): FeedbackBounce {
  const filed = fileDsnFailure(status, diagnosticCode);
  const type = filed?.type ?? 'Undetermined';
  return {
    type,
    subType: filed?.subType ?? 'Undetermined',
    message: BOUNCE_MESSAGES[type],
    diagnosticCode: diagnosticCode ? [diagnosticCode] : [],
  };
}

/**
 * Whether a failed recipient's status and diagnostic say the address itself is at fault, so that it joins
 * the suppression list (the classification's `suppress`, as for a refusal at our own delivery).
 */
export function dsnFailureSuppresses(status: string | null, diagnosticCode: string | null): boolean {
  return fileDsnFailure(status, diagnosticCode)?.suppress ?? false;
}

/** The classification of a DSN failure; undefined when neither its status nor its diagnostic has a code. */
function fileDsnFailure(status: string | null, diagnosticCode: string | null): BounceClass | undefined {
  const text = diagnosticCode ? diagnosticText(diagnosticCode) : '';
  const replyCode = /^([245]\d\d)(?=[\s-]|$)/.exec(text)?.[1];
  let code: number | undefined;
  if (status) code = replyCode?.[0] === status[0] ? Number(replyCode) : Number(status[0]) * 100;
  else if (replyCode) code = Number(replyCode);
  // A generic status (x.0.0, Exim's for every failure) says no more than its class: the reply's own
  // enhanced code or text decides the subtype, as it does for a reply without one.
  const enhanced = status && !status.endsWith('.0.0') ? status : null;
  return code === undefined ? undefined : classifyReply(code, enhanced, text);
}

/** The `message` of a bounce reported after acceptance, by its type. */
export const BOUNCE_MESSAGES: Record<FeedbackBounce['type'], string> = {
  Permanent: "The recipient's mail system reported after accepting the email that it cannot be delivered.",
  Transient:
    "The recipient's mail system gave up delivering the email after accepting it, for a reason that may not last.",
  Undetermined: "The recipient's mail system reported the email undeliverable without a usable status.",
};

/** The text of a diagnostic after its type (`smtp; 550 ...` → `550 ...`); the whole value without one. */
function diagnosticText(value: string): string {
  const match = /^\s*[A-Za-z][\w-]*\s*;\s*/.exec(value);
  return (match ? value.slice(match[0].length) : value).trim();
}

/** The address of a typed address field (`rfc822; a@b.test`, `rfc822;<a@b.test>`), or null. */
function address(value: string | undefined): string | null {
  const text = typed(value);
  if (!text) return null;
  const bare = text.replace(/^<|>$/g, '').trim();
  return bare.includes('@') ? bare : null;
}

/** The value of a field after its type (`dns; mx.example.com` → `mx.example.com`). */
function typed(value: string | undefined): string | null {
  if (value === undefined) return null;
  const semicolon = value.indexOf(';');
  const text = (semicolon >= 0 ? value.slice(semicolon + 1) : value).trim();
  return text === '' ? null : text;
}
