// Bounces that are not RFC 3464 reports: qmail's QSBMF, some Exchange and hosted
// forms, plain-text "Mail delivery failed" messages. The VERP address they were sent to still names the
// email (and the recipient, when it has its position); this reads what the text tells on top: whether it
// is a bounce at all (not an auto-reply), the recipients qmail lists, and an SMTP reply to classify.
import { classifyReply } from '@postline/platform/pure';
import { BOUNCE_MESSAGES, type FeedbackBounce } from './dsn.ts';

export type TextBounce =
  | { kind: 'failed'; recipients: { address: string | null; bounce: FeedbackBounce; suppress: boolean }[] }
  | { kind: 'delayed' }
  | { kind: 'not-a-bounce' };

/** What of a message is read: its Subject (decoded), From, Auto-Submitted, and its first text part. */
export type TextMessage = { subject: string; from: string; autoSubmitted: string | undefined; text: string };

/** Only this much of the text is read: the explanation comes first, the copy of the message after it. */
const MAX_TEXT_CHARS = 16 * 1024;

const FAILURE_SUBJECT =
  /failure notice|undeliver|undelivered|returned mail|delivery (?:status notification \(failure\)|failure|failed|has failed|problem)|mail delivery (?:failed|failure|system|subsystem)|non-?delivery|could not be delivered|unable to deliver|rejected/i;
const DELAY_SUBJECT = /delay|delayed|warning|still being retried|not yet (?:been )?delivered/i;
const AUTO_REPLY_SUBJECT =
  /^(?:auto(?:matic)?[ -]?(?:reply|response)|out of (?:the )?office|on vacation|abwesenheit|réponse automatique)/i;
const DAEMON_SENDER = /(?:^|[<\s"])(?:mailer-daemon|postmaster|mail delivery (?:subsystem|system))/i;
/** qmail's QSBMF opening (http://cr.yp.to/proto/qsbmf.txt). */
const QMAIL = /This is the qmail-send program|I'm afraid I wasn't able to deliver your message/i;
/** An SMTP reply code, optionally with its enhanced status (`550 5.1.1`, `550-5.1.1`, Exchange's `#550 #5.1.1`). */
const REPLY = /(?:^|[\s:#(])([45]\d\d)(?:[ -]#?([245]\.\d{1,3}\.\d{1,3}))?(?=[\s.,;:)]|$)/;
/** A bare enhanced status (qmail's `(#5.1.1)`). */
const STATUS = /(?:^|[\s(#])([245]\.\d{1,3}\.\d{1,3})(?=[\s.,;)]|$)/;

/**
 * Reads a message that came back to a VERP address without a delivery-status part. An auto-reply (RFC
 * 3834 Auto-Submitted: auto-replied, or a vacation subject) is not a bounce; a message is a bounce when its
 * subject, its sender (MAILER-DAEMON, postmaster) or qmail's wording says so, and a delay warning when its
 * subject says delayed or warning. Each recipient qmail lists
 * is filed from its own paragraph; otherwise one unnamed recipient is filed from the first SMTP reply in
 * the text, Undetermined when there is none.
 */
export function readTextBounce(message: TextMessage): TextBounce {
  const text = message.text.slice(0, MAX_TEXT_CHARS);
  const autoSubmitted = message.autoSubmitted?.trim().toLowerCase();
  if (
    (autoSubmitted && autoSubmitted !== 'no' && autoSubmitted !== 'auto-generated') ||
    AUTO_REPLY_SUBJECT.test(message.subject)
  ) {
    return { kind: 'not-a-bounce' };
  }
  const qmail = QMAIL.test(text);
  // A warning first: "Warning: message still undelivered after 4 hours" is no failure. Erring this way
  // causes nothing, where the other way would bounce a delivery still under way.
  if (!qmail && DELAY_SUBJECT.test(message.subject)) return { kind: 'delayed' };
  if (!qmail && !FAILURE_SUBJECT.test(message.subject) && !DAEMON_SENDER.test(message.from))
    return { kind: 'not-a-bounce' };

  const paragraphs = qmail ? qmailRecipients(text) : [];
  if (paragraphs.length > 0) {
    return {
      kind: 'failed',
      recipients: paragraphs.map(({ address, reason }) => ({ address, ...classifyText(reason) })),
    };
  }
  return { kind: 'failed', recipients: [{ address: null, ...classifyText(text) }] };
}

/** qmail's paragraphs: `<address>:` on a line of its own, then the reason, up to an empty line. */
function qmailRecipients(text: string): { address: string; reason: string }[] {
  const out: { address: string; reason: string }[] = [];
  const body = text.split(/^--- Below this line is a copy of the message\./m)[0] ?? text;
  for (const paragraph of body.split(/\r?\n[ \t]*\r?\n/)) {
    const match = /^\s*<([^<>\s]+@[^<>\s]+)>:[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(paragraph);
    if (match) out.push({ address: match[1]!, reason: match[2]!.trim() });
  }
  return out;
}

/**
 * The classification of the first SMTP reply (or bare enhanced status) in a text, and whether it suppresses
 * the address; Undetermined (no suppression) without one.
 */
function classifyText(text: string): { bounce: FeedbackBounce; suppress: boolean } {
  for (const line of text.split(/\r?\n/)) {
    const reply = REPLY.exec(line);
    const status = reply ? reply[2] : STATUS.exec(line)?.[1];
    if (!reply && !status) continue;
    const code = reply ? Number(reply[1]) : Number(status![0]) * 100;
    const filed = classifyReply(code, status ? normalise(status) : null, line);
    const diagnostic = line.trim().slice(0, 1000);
    const bounce: FeedbackBounce = {
      type: filed.type,
      subType: filed.subType,
      message: BOUNCE_MESSAGES[filed.type],
      diagnosticCode: [reply && diagnostic.startsWith(reply[1]!) ? `smtp; ${diagnostic}` : diagnostic],
    };
    return { bounce, suppress: filed.suppress };
  }
  return {
    bounce: {
      type: 'Undetermined',
      subType: 'Undetermined',
      message: BOUNCE_MESSAGES.Undetermined,
      diagnosticCode: [],
    },
    suppress: false,
  };
}

function normalise(status: string): string {
  return status.split('.').map(Number).join('.');
}
