import type { BounceClass } from '@postline/platform';
import type { SmtpTrace } from './transcript.ts';

/**
 * One recipient's outcome of one delivery attempt. `code`/`enhanced` are the SMTP reply code and RFC 3463
 * status (`5.1.1`), or the ones we assign when no server answered (DNS, connection, policy). `mx` is the host
 * that answered, null when none did.
 */
export type RecipientOutcome =
  | { status: 'delivered'; recipient: string; code: number; response: string; mx: string }
  | {
      status: 'deferred';
      recipient: string;
      code: number;
      enhanced: string | null;
      response: string;
      mx: string | null;
      /** Deferred without a connection by the provider's traffic shaping, until its next turn. */
      throttle?: { provider: string; until: Date };
    }
  | {
      status: 'bounced';
      recipient: string;
      code: number;
      enhanced: string | null;
      response: string;
      mx: string | null;
      bounce: BounceClass;
    };

/** One SMTP transaction's worth of work: one signed message to recipients that share a domain. */
export type DeliveryRequest = {
  /** Recipient domain, lower-case (IDNs already in punycode). Every recipient is at this domain. */
  domain: string;
  /** MAIL FROM: the message's VERP address. */
  envelopeFrom: string;
  /** At most 50. */
  recipients: string[];
  /** The DKIM-signed message, CRLF line endings. */
  raw: Buffer;
  /** The sending domain asked for `tls: enforced`: never deliver in plaintext (a TLS failure defers). */
  requireTls: boolean;
  /** Filled with a trace of each MX address tried (or of the lookup that found none), in order. */
  trace?: SmtpTrace[];
  /** The team and email the message is for (the development inbox keeps them with it). */
  origin?: { teamId: string; emailId: string };
  /** Kept in the install (the development inbox) whatever DEV_INBOX says: the onboarding sender's to members. */
  keep?: boolean;
};

/** The outbound MTA: resolves the domain's MX hosts, dials them safely and reports every recipient. */
export type Mta = {
  /** Never throws for the destination's behaviour; returns one outcome per recipient, in order. */
  deliver: (request: DeliveryRequest) => Promise<RecipientOutcome[]>;
  /**
   * The outcomes `deliver` would give at once because the traffic shaping holds the domain's provider (each
   * recipient deferred, without a connection), or undefined when it would try or cannot tell without a DNS
   * lookup: so that the message is not made for a delivery that cannot go. Adds to `trace` as `deliver` would.
   */
  held: (
    request: Pick<DeliveryRequest, 'domain' | 'recipients' | 'trace' | 'keep'>,
  ) => Promise<RecipientOutcome[] | undefined>;
  /** Deliveries (SMTP transactions, with their MX lookups) under way now. */
  inFlight: () => number;
  close: () => Promise<void>;
};
