// Abuse feedback reports (ARF, RFC 5965; feedback types in the IANA MARF registry): the fields of a
// message/feedback-report part, as Yahoo's and Microsoft's (JMRP) feedback loops send them, and which feedback types
// are complaints.
import { headerValue, headerValues, parseHeaderBlock } from './multipart-report.ts';

export type FeedbackReport = {
  /** Lower-case (`abuse`, `fraud`, `other`, `virus`, `auth-failure`, `not-spam`, ...), or null when absent. */
  feedbackType: string | null;
  userAgent: string | null;
  version: string | null;
  /** The original's MAIL FROM, bare (`<…>` removed): our VERP address when the report keeps it. */
  originalMailFrom: string | null;
  /** The original's RCPT TO addresses, bare; often absent or redacted. */
  originalRcptTo: string[];
  arrivalDate: string | null;
  reportedDomains: string[];
  sourceIp: string | null;
};

/** At most this many characters of a feedback type are kept (the contract's limit). */
const MAX_TYPE_CHARS = 64;

export function parseFeedbackReport(text: string): FeedbackReport {
  const fields = parseHeaderBlock(text);
  const value = (name: string) => headerValue(fields, name)?.trim() || null;
  const feedbackType = value('feedback-type')?.toLowerCase().slice(0, MAX_TYPE_CHARS) ?? null;
  return {
    feedbackType,
    userAgent: value('user-agent'),
    version: value('version'),
    originalMailFrom: bare(value('original-mail-from')),
    originalRcptTo: headerValues(fields, 'original-rcpt-to')
      .map(bare)
      .filter((address) => address !== null),
    // Yahoo's older reports say Received-Date.
    arrivalDate: value('arrival-date') ?? value('received-date'),
    reportedDomains: headerValues(fields, 'reported-domain')
      .map((domain) => domain.trim().toLowerCase())
      .filter(Boolean),
    sourceIp: value('source-ip'),
  };
}

/**
 * Whether a feedback type is a recipient's complaint. `not-spam` (RFC 6430) is the opposite, and
 * `auth-failure` (RFC 6591) reports a message that failed SPF, DKIM or DMARC checks, which says nothing of
 * what the recipient wants. Any other type, registered (`abuse`, `fraud`, `virus`, `other`) or not, is a
 * complaint: RFC 5965 §7.3 has an unknown type read as `other`.
 */
export function isComplaint(feedbackType: string): boolean {
  return feedbackType !== 'not-spam' && feedbackType !== 'auth-failure';
}

/** An address without its angle brackets (`<a@b.test>` → `a@b.test`); null when it has no `@`. */
function bare(value: string | null): string | null {
  if (!value) return null;
  const match = /<([^<>]*)>/.exec(value);
  const address = (match ? match[1]! : value).trim();
  return address.includes('@') ? address : null;
}
