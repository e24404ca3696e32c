// What a message to a return-path domain is and what it causes (RFC 3464 DSNs, RFC 5965 ARF): a DSN's failed
// recipients become bounces, an ARF complaint a complaint, a List-Unsubscribe mail an unsubscribe request;
// each only once the VERP address that names the email verifies (its HMAC, and its domain a return path
// of the team whose domain received the mail). A forged or missing VERP address causes nothing.
import type { EmailFeedback, UnsubscribeMail } from '@postline/contracts';
import { parseVerp } from '@postline/platform/pure';
import { isComplaint, parseFeedbackReport, type FeedbackReport } from './arf.ts';
import {
  effectiveAction,
  classifyDsnFailure,
  dsnFailureSuppresses,
  parseDeliveryStatus,
  type DeliveryStatus,
} from './dsn.ts';
import { decodeWords, findReport, firstText, headerValue, parseMime } from './multipart-report.ts';
import {
  domainOf,
  localPartOf,
  looksLikeVerp,
  UNSUBSCRIBE_LOCAL_PART,
  unsubscribeToken,
} from './return-path-address.ts';
import { readTextBounce, type TextBounce } from './return-path-text-bounce.ts';

/**
 * What became of the mail for one recipient (the `inbound_return_path_mail_total` outcome label):
 * `bounce`, `complaint`, `unsubscribe` (acted on), `delayed` (a DSN that only warns), `forged` (a VERP tag
 * that does not verify, or a VERP address of another team), `unmatched` (no VERP address, or a report that
 * names no recipient), `ignored` (neither a bounce, a complaint nor an unsubscribe request).
 */
export type ReturnPathOutcome = 'bounce' | 'complaint' | 'unsubscribe' | 'delayed' | 'forged' | 'unmatched' | 'ignored';

export type ReadReport =
  | { kind: 'dsn'; status: DeliveryStatus }
  | { kind: 'arf'; feedback: FeedbackReport }
  | { kind: 'text'; bounce: TextBounce };

/** A message to a return-path domain as read once, whatever its recipients. */
export type ReadMail = {
  report: ReadReport;
  /** Where a VERP address may be besides the RCPT, in order: Original-Mail-From (ARF), the original's Return-Path. */
  verpCandidates: string[];
  /** The message's Subject, decoded (an unsubscribe request's token is there). */
  subject: string;
  /** The original's To addresses, for a complaint that names no recipient otherwise. */
  originalTo: string[];
  /** What an operator sees of the message: its report fields, or the start of its text (bounded). */
  excerpt: string;
};

/** What a row keeps of a message: enough to see what came in, not the message. */
const EXCERPT_CHARS = 2000;

/** Reads a message: its report (a DSN, an ARF report, or else the text of a possible non-RFC bounce). */
export function readReturnPathMail(raw: Buffer): ReadMail {
  const root = parseMime(raw);
  const subject = decodeWords(headerValue(root.headers, 'subject') ?? '').trim();
  const found = findReport(root);
  const original = found?.original ?? [];
  const originalTo = addresses(headerValue(original, 'to') ?? '');
  const returnPath = addresses(headerValue(original, 'return-path') ?? '')[0];

  if (found?.kind === 'feedback-report') {
    const feedback = parseFeedbackReport(found.fields);
    const verpCandidates = [feedback.originalMailFrom, returnPath].filter(
      (address) => address !== null && address !== undefined,
    );
    return {
      report: { kind: 'arf', feedback },
      verpCandidates,
      subject,
      originalTo,
      excerpt: found.fields.slice(0, EXCERPT_CHARS),
    };
  }
  const verpCandidates = returnPath ? [returnPath] : [];
  if (found?.kind === 'delivery-status') {
    const status = parseDeliveryStatus(found.fields);
    // A delivery-status part without a recipient group is read as the text it came with.
    if (status.recipients.length > 0) {
      return {
        report: { kind: 'dsn', status },
        verpCandidates,
        subject,
        originalTo,
        excerpt: found.fields.slice(0, EXCERPT_CHARS),
      };
    }
  }
  const text = firstText(root);
  const bounce = readTextBounce({
    subject,
    from: headerValue(root.headers, 'from') ?? '',
    autoSubmitted: headerValue(root.headers, 'auto-submitted'),
    text,
  });
  return {
    report: { kind: 'text', bounce },
    verpCandidates,
    subject,
    originalTo,
    excerpt: text.slice(0, EXCERPT_CHARS),
  };
}

/** The RCPT a message came in for, at a return-path domain of `teamId`. */
export type ReturnPathRecipient = { address: string; teamId: string; returnPath: string };

/** What one recipient's mail causes. */
export type ReturnPathDecision = {
  outcome: ReturnPathOutcome;
  /** The email the VERP address names (null when none verified). */
  emailId: string | null;
  feedback: EmailFeedback[];
  unsubscribe: UnsubscribeMail | undefined;
  /** Why, for the log and the row (`bad VERP tag`, `feedback type not-spam`, ...). */
  detail: string;
};

/** The first address shaped like a VERP address: the RCPT, else one the report names (its tag not checked). */
export function verpCandidate(read: ReadMail, recipient: ReturnPathRecipient): string | undefined {
  return [recipient.address, ...read.verpCandidates].find(looksLikeVerp);
}

/**
 * Decides what a read message causes for one of its recipients. `teamReturnPaths`: return-path domains
 * known to be the recipient's team's (a VERP address found inside a report must be at one of them; the
 * RCPT's own is always); `envelopeFrom`:
 * MAIL FROM, named in an unsubscribe request.
 */
export function decideReturnPathMail(
  read: ReadMail,
  recipient: ReturnPathRecipient,
  context: { verpKey: string; teamReturnPaths: ReadonlySet<string>; envelopeFrom: string },
): ReturnPathDecision {
  if (localPartOf(recipient.address) === UNSUBSCRIBE_LOCAL_PART) {
    const token = unsubscribeToken(read.subject);
    if (!token) return decision('ignored', null, [], 'no unsubscribe token in the subject');
    return {
      ...decision('unsubscribe', null, [], 'unsubscribe request'),
      unsubscribe: { token, from: context.envelopeFrom.slice(0, 320) },
    };
  }

  const candidate = verpCandidate(read, recipient);
  if (!candidate) return decision('unmatched', null, [], 'no VERP address');
  const verp = parseVerp(candidate, context.verpKey);
  if (!verp) return decision('forged', null, [], 'VERP tag does not verify');
  const verpDomain = domainOf(candidate);
  if (verpDomain !== recipient.returnPath && !context.teamReturnPaths.has(verpDomain)) {
    return decision('forged', null, [], "VERP address at another team's return path");
  }
  const emailId = verp.emailId;
  const named = (address: string | null): { recipient_position: number } | { recipient: string } | undefined =>
    verp.recipient !== null
      ? { recipient_position: verp.recipient }
      : address
        ? { recipient: address.slice(0, 320) }
        : undefined;

  const { report } = read;
  if (report.kind === 'arf') {
    const type = report.feedback.feedbackType;
    if (!type) return decision('ignored', emailId, [], 'feedback report without Feedback-Type');
    if (!isComplaint(type)) return decision('ignored', emailId, [], `feedback type ${type}`);
    const addresses =
      report.feedback.originalRcptTo.length > 0
        ? report.feedback.originalRcptTo
        : read.originalTo.length === 1
          ? read.originalTo
          : [];
    const feedback = uniqueRecipients(verp.recipient !== null ? [named(null)] : addresses.map(named)).map(
      (who): EmailFeedback => ({ email_id: emailId, ...who, kind: 'complaint', feedback_type: type }),
    );
    if (feedback.length === 0) return decision('unmatched', emailId, [], 'complaint names no recipient');
    return decision('complaint', emailId, feedback, `feedback type ${type}`);
  }

  const failed =
    report.kind === 'dsn'
      ? report.status.recipients
          .filter((entry) => effectiveAction(entry) === 'failed')
          .map((entry) => ({
            address: entry.originalRecipient ?? entry.finalRecipient,
            bounce: classifyDsnFailure(entry.status, entry.diagnosticCode),
            suppress: dsnFailureSuppresses(entry.status, entry.diagnosticCode),
          }))
      : report.bounce.kind === 'failed'
        ? report.bounce.recipients
        : [];
  if (failed.length === 0) {
    const delayed =
      report.kind === 'dsn'
        ? report.status.recipients.some((entry) => effectiveAction(entry) === 'delayed')
        : report.bounce.kind === 'delayed';
    if (delayed) return decision('delayed', emailId, [], 'delivery delayed');
    return decision('ignored', emailId, [], report.kind === 'dsn' ? 'no failed recipient' : 'not a bounce');
  }
  const bounces = failed.flatMap(({ address, bounce, suppress }) => {
    const who = named(address);
    return who ? [{ who, bounce, suppress }] : [];
  });
  const feedback = uniqueBy(bounces, ({ who }) => key(who)).map(
    ({ who, bounce, suppress }): EmailFeedback => ({ email_id: emailId, ...who, kind: 'bounce', bounce, suppress }),
  );
  if (feedback.length === 0) return decision('unmatched', emailId, [], 'bounce names no recipient');
  return decision(
    'bounce',
    emailId,
    feedback,
    report.kind === 'dsn' ? 'delivery status notification' : 'non-RFC bounce',
  );
}

function decision(
  outcome: ReturnPathOutcome,
  emailId: string | null,
  feedback: EmailFeedback[],
  detail: string,
): ReturnPathDecision {
  return { outcome, emailId, feedback, unsubscribe: undefined, detail };
}

type Named = { recipient_position: number } | { recipient: string };

function key(who: Named): string {
  return 'recipient_position' in who ? `#${who.recipient_position}` : who.recipient.toLowerCase();
}

function uniqueRecipients(list: (Named | undefined)[]): Named[] {
  return uniqueBy(
    list.filter((who) => who !== undefined),
    key,
  );
}

function uniqueBy<T>(list: readonly T[], keyOf: (item: T) => string): T[] {
  const seen = new Set<string>();
  return list.filter((item) => {
    const k = keyOf(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The bare addresses of an address header (`"A" <a@b.test>, c@d.test`); display names and groups ignored. */
function addresses(value: string): string[] {
  const out: string[] = [];
  for (const match of value.matchAll(/<([^<>\s]+@[^<>\s]+)>|([^\s<>,;:"]+@[^\s<>,;:"]+)/g)) {
    out.push(match[1] ?? match[2]!);
  }
  return out;
}
