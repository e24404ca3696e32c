// Replies for recipients: the table of the replies the MTA makes up itself, and the outcome of a recipient
// from a server's reply or from one of ours.
import { classifyReply, formatSmtpReply, parseEnhancedCode, type SmtpReply } from '@postline/platform';
import type { RecipientOutcome } from './types.ts';

/**
 * The replies the MTA makes up itself when no server gave one (DNS, connection, policy). One table, so the
 * same situation always gets the same code; RFC 3463 / IANA enhanced codes.
 */
export const LOCAL_REPLIES = {
  /** RFC 7505: the domain publishes `MX 0 .`; never connect. */
  nullMx: { code: 556, enhanced: '5.1.10', text: 'Recipient domain publishes a null MX and accepts no mail' },
  /** NXDOMAIN for the recipient domain (RFC 5321 §5.1: an error, not a retry). */
  noSuchDomain: { code: 550, enhanced: '5.1.2', text: 'Recipient domain does not exist' },
  /** The domain exists but has neither MX nor A/AAAA records: nothing to deliver to. */
  noMailHost: { code: 550, enhanced: '5.1.2', text: 'Recipient domain has no MX and no address records' },
  /** MX records exist but none names a host with an address (IP literals, NXDOMAIN exchanges). */
  noUsableMx: { code: 550, enhanced: '5.4.4', text: 'No MX host of the recipient domain resolves to an address' },
  /** Every address of every MX host is private, loopback, link-local or otherwise non-public. */
  mxRefusedByPolicy: {
    code: 550,
    enhanced: '5.4.4',
    text: 'MX hosts of the recipient domain resolve only to non-public addresses (refused by policy)',
  },
  /** SERVFAIL, timeout or refusal from DNS: retry later (RFC 5321 §4.5.4.1). */
  dnsTemporary: { code: 451, enhanced: '4.4.3', text: 'Temporary DNS failure resolving the recipient domain' },
  /** No MX host answered (refused, timed out, no greeting, 421). */
  noAnswer: { code: 451, enhanced: '4.4.1', text: 'No MX host of the recipient domain could be reached' },
  /** Connection lost or timed out during the transaction, typically after the final dot: maybe delivered, retried. */
  connectionLost: { code: 451, enhanced: '4.4.2', text: 'Connection lost before the server confirmed the message' },
  /** The sending domain requires TLS and the MX host did not offer it or the handshake failed. */
  tlsRequired: {
    code: 451,
    enhanced: '4.7.10',
    text: 'TLS is required for this message and the MX host could not provide it',
  },
  /** A recipient we cannot put into RCPT TO (CR, LF, angle brackets, spaces): never sent. */
  badAddress: { code: 553, enhanced: '5.1.3', text: 'Bad recipient address syntax' },
  /** The message is larger than the SIZE the server announced. */
  messageTooLarge: { code: 552, enhanced: '5.3.4', text: 'Message larger than the recipient server accepts' },
  /** Every session to the MX address stayed busy while the delivery waited for one (RFC 3463 X.4.5). */
  destinationBusy: { code: 451, enhanced: '4.4.5', text: 'The MX host is busy with our other deliveries' },
  /** The recipient's mailbox provider pushed back and is held, or its rate is used up (traffic shaping). */
  providerThrottled: { code: 451, enhanced: '4.7.0', text: 'Deliveries to this mailbox provider are throttled' },
  /** A failure of our own (bad envelope, unexpected error): retried, never filed against the recipient. */
  localError: { code: 451, enhanced: '4.3.0', text: 'Local error while delivering' },
} as const satisfies Record<string, SmtpReply>;

export type LocalReply = (typeof LOCAL_REPLIES)[keyof typeof LOCAL_REPLIES];

/** nodemailer's error shape (its errors type is not exported). */
export type SmtpError = Error & {
  code?: string;
  command?: string;
  response?: string;
  responseCode?: number;
  recipient?: string;
  rejectedErrors?: SmtpError[];
};

/** Why an address gave no result; the reply, when the server gave one, is reported if nothing else works. */
export type AddressFailure = {
  mx: string | null;
  code: number;
  enhanced: string | null;
  response: string;
  tls: boolean;
};

/** RFC 5321 §4.5.3.1.10: a 452 to RCPT TO that only means "no more recipients in this transaction". */
export function tooManyRecipients(outcome: RecipientOutcome): boolean {
  return (
    outcome.status === 'deferred' &&
    outcome.code === 452 &&
    (outcome.enhanced === '4.5.3' || /too many recipients/i.test(outcome.response))
  );
}

/** An address's failure from the error that ended its session or transaction. */
export function failureOf(error: SmtpError, mx: string, tls: boolean): AddressFailure {
  if (error.responseCode && error.response) {
    return { mx, code: error.responseCode, enhanced: parseEnhancedCode(error.response), response: error.response, tls };
  }
  return { mx: null, ...localReply(LOCAL_REPLIES.noAnswer, `${mx}: ${error.message}`), tls };
}

/**
 * A server's reply text is stored with the recipient and sent in events; Postgres text and jsonb cannot hold
 * U+0000, so a NUL from a (hostile or broken) MX becomes U+FFFD instead of making the attempt unrecordable.
 */
export function storable(outcome: RecipientOutcome): RecipientOutcome {
  return outcome.response.includes('\0')
    ? { ...outcome, response: outcome.response.replaceAll('\0', '\uFFFD') }
    : outcome;
}

/**
 * An outcome from a server reply. Only a reply to this recipient's RCPT TO can suppress the address; a
 * reply to MAIL FROM or to the message (`553 5.1.8` bad sender, `550` after the dot) says nothing about
 * the recipient's mailbox.
 */
export function outcomeFromReply(
  recipient: string,
  code: number,
  response: string,
  mx: string,
  scope: 'recipient' | 'transaction',
): RecipientOutcome {
  const enhanced = parseEnhancedCode(response);
  if (code >= 500) {
    const bounce = classifyReply(code, enhanced, response);
    return {
      status: 'bounced',
      recipient,
      code,
      enhanced,
      response,
      mx,
      bounce: scope === 'recipient' ? bounce : { ...bounce, suppress: false },
    };
  }
  return { status: 'deferred', recipient, code, enhanced, response, mx };
}

/** An outcome from a reply we make up (LOCAL_REPLIES), `detail` after its text. */
export function localOutcome(
  recipient: string,
  reply: LocalReply,
  mx: string | null,
  detail?: string,
): RecipientOutcome {
  const { code, enhanced, response } = localReply(reply, detail);
  if (code >= 500)
    return {
      status: 'bounced',
      recipient,
      code,
      enhanced,
      response,
      mx,
      bounce: classifyReply(code, enhanced, response),
    };
  return { status: 'deferred', recipient, code, enhanced, response, mx };
}

/** A reply we make up, `detail` after its text. */
export function localReply(reply: LocalReply, detail?: string): Omit<AddressFailure, 'mx'> {
  return {
    code: reply.code,
    enhanced: reply.enhanced,
    response: detail ? `${formatSmtpReply(reply)}: ${detail}` : formatSmtpReply(reply),
    tls: false,
  };
}
