// The SMTP relay's replies: one table, and the rules that turn the gateway's answers (the relay ⇄ gateway
// contract: GET /relay/credentials at AUTH, POST /emails message/rfc822 at DATA) into them. Each reply is
// the platform's SmtpReply, with its enhanced status code by the platform's policy (smtp-server's automatic
// ones are off). A message is answered 250 only when the gateway answered 200.
import type { SmtpReply } from '@postline/platform/pure';

/** How a transaction ended, for the `messages` metric: a 2xx, a 5xx the client must not retry, a 4xx. */
export type RelayOutcome = 'accepted' | 'rejected' | 'deferred';

/** The gateway's answer to one call, or why there was none (refused connection, timeout, reset). */
export type GatewayAnswer = { kind: 'answered'; status: number; body: string } | { kind: 'failed'; reason: string };

/** What the relay answers a DATA: the reply, its outcome, and whether the session ends after it (421). */
export type SubmissionReply = SmtpReply & { outcome: RelayOutcome; closeAfter: boolean };

/** The key permissions that may submit through the relay (both do). */
export type RelayPermission = 'full_access' | 'sending_access';

export type CredentialsVerdict =
  | { kind: 'accepted'; permission: RelayPermission }
  /** The key is unknown, revoked or expired, or its team is disabled: 535, counted against the client. */
  | { kind: 'refused' }
  /** The gateway could not say (down, 5xx, an answer we do not understand): 454, not counted. */
  | { kind: 'unavailable' };

/** Gateway messages are quoted in replies; a reply line stays well under RFC 5321's 512 octets. */
const MAX_QUOTED_CHARS = 300;

export const RELAY_REPLIES = {
  authRequired: {
    code: 530,
    enhanced: '5.7.0',
    text: 'Authentication required: AUTH PLAIN or LOGIN with an API key as the password',
  },
  badCredentials: { code: 535, enhanced: '5.7.8', text: 'Authentication credentials invalid' },
  authUnavailable: { code: 454, enhanced: '4.7.0', text: 'Temporary authentication failure, try again later' },
  authLockedOut: (ip: string): SmtpReply => ({
    code: 421,
    enhanced: '4.7.0',
    text: `Too many failed authentication attempts from ${ip}, try again later`,
  }),
  tooManySessions: (ip: string, max: number): SmtpReply => ({
    code: 421,
    enhanced: '4.7.0',
    text: `Too many connections from ${ip} (at most ${max} at once), try again later`,
  }),
  sessionTooLong: { code: 421, enhanced: '4.4.2', text: 'Session time limit reached, closing connection' },
  shuttingDown: { code: 421, enhanced: '4.3.2', text: 'Service shutting down, try again later' },
  tooManyRecipients: (max: number): SmtpReply => ({
    code: 452,
    enhanced: '4.5.3',
    text: `Too many recipients (at most ${max} per message)`,
  }),
  nonAsciiAddress: (address: string): SmtpReply => ({
    code: 553,
    enhanced: '5.6.7',
    text: `<${address}>: non-ASCII addresses are not supported by the relay`,
  }),
  unusableAddress: (address: string): SmtpReply => ({
    code: 553,
    enhanced: '5.1.3',
    text: `<${address}>: addresses with a comma are not supported by the relay`,
  }),
  tooLarge: (max: number): SmtpReply => ({
    code: 552,
    enhanced: '5.3.4',
    text: `Message exceeds the maximum size of ${max} bytes`,
  }),
  badIdempotencyKey: {
    code: 550,
    enhanced: '5.6.0',
    text: 'The Resend-Idempotency-Key header must be printable ASCII',
  },
  notReceived: { code: 451, enhanced: '4.3.0', text: 'Message not received in full' },
  submitFailed: { code: 451, enhanced: '4.3.0', text: 'Temporary failure submitting the message, try again later' },
} as const satisfies Record<string, SmtpReply | ((...args: never[]) => SmtpReply)>;

const accepted = (text: string): SubmissionReply => ({
  code: 250,
  enhanced: '2.0.0',
  text,
  outcome: 'accepted',
  closeAfter: false,
});
const rejected = (code: number, enhanced: string, text: string): SubmissionReply => ({
  code,
  enhanced,
  text,
  outcome: 'rejected',
  closeAfter: false,
});
const deferred = (code: number, enhanced: string, text: string, closeAfter = false): SubmissionReply => ({
  code,
  enhanced,
  text,
  outcome: 'deferred',
  closeAfter,
});
const as = (reply: SmtpReply, outcome: 'rejected' | 'deferred'): SubmissionReply =>
  outcome === 'rejected'
    ? rejected(reply.code, reply.enhanced, reply.text)
    : deferred(reply.code, reply.enhanced, reply.text);

/** The answer of GET /relay/credentials as a verdict on the key given at AUTH. */
export function credentialsVerdict(answer: GatewayAnswer): CredentialsVerdict {
  if (answer.kind === 'failed') return { kind: 'unavailable' };
  if (answer.status === 401 || answer.status === 403) return { kind: 'refused' };
  if (answer.status !== 200) return { kind: 'unavailable' };
  const body = parseJson(answer.body);
  const permission = body?.permission;
  if (body?.object === 'relay_credentials' && (permission === 'full_access' || permission === 'sending_access')) {
    return { kind: 'accepted', permission };
  }
  return { kind: 'unavailable' };
}

/**
 * The answer of POST /emails (message/rfc822) as the reply to DATA. Anything the contract does not name
 * (a 404 from a gateway without the raw route, a 5xx, no answer) is temporary: the client keeps the message
 * and retries, and nothing is lost.
 */
export function submissionReply(answer: GatewayAnswer): SubmissionReply {
  if (answer.kind === 'failed') return as(RELAY_REPLIES.submitFailed, 'deferred');
  const body = parseJson(answer.body);
  const name = typeof body?.name === 'string' ? body.name : undefined;
  const message = quoted(typeof body?.message === 'string' ? body.message : '');
  const { status } = answer;
  if (status === 200) {
    const id = typeof body?.id === 'string' ? quoted(body.id) : '';
    return accepted(id ? `Ok: queued as ${id}` : 'Ok: queued');
  }
  if (status === 401 || (status === 403 && (name === 'invalid_api_key' || name === 'missing_api_key'))) {
    return as(RELAY_REPLIES.badCredentials, 'rejected');
  }
  if (status === 403) return rejected(550, '5.7.1', message || 'Sending refused');
  if (status === 400 || status === 422) return rejected(550, '5.6.0', message || 'The message was refused');
  if (status === 413) return rejected(552, '5.3.4', message || 'Message too large');
  if (status === 429) return deferred(421, '4.7.0', message || 'Rate limit exceeded, try again later', true);
  if (status === 409 && name === 'invalid_idempotent_request')
    return rejected(550, '5.7.0', message || 'Idempotency key already used');
  if (status === 409) return deferred(451, '4.3.0', message || 'The same message is being submitted, try again later');
  return as(RELAY_REPLIES.submitFailed, 'deferred');
}

/** A gateway text as one short ASCII reply line: control and non-ASCII characters as spaces, long texts cut. */
function quoted(text: string): string {
  const line = text.replace(/[^\x20-\x7e]+/g, ' ').trim();
  return line.length > MAX_QUOTED_CHARS ? `${line.slice(0, MAX_QUOTED_CHARS - 3)}...` : line;
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
