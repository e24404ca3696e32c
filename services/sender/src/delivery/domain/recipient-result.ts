import type { SuppressionOrigin } from '@postline/contracts';
import type { BounceClass } from '@postline/platform/pure';

/** What happened to one recipient in one delivery attempt: what the attempt records for it. */
export type RecipientResult =
  | { kind: 'delivered'; code: number; response: string }
  /**
   * fromServer: a server gave the reply (a deferral that runs out of time is then a transient bounce).
   * throttle: deferred by the traffic shaping of the recipient's mailbox provider, retried at `until`.
   */
  | {
      kind: 'deferred';
      code: number;
      response: string;
      fromServer: boolean;
      throttle?: { provider: string; until: Date };
    }
  | { kind: 'bounced'; code: number; response: string; bounce: BounceClass }
  | { kind: 'complained' }
  /** reason: why the address is listed; none for an address the team added by hand. */
  | { kind: 'suppressed'; reason: 'previous_bounce' | 'previous_complaint' | undefined }
  | { kind: 'failed'; reason: string };

/** The result of a recipient on the team's suppression list, or undefined when it is not listed. */
export function suppressedResult(origin: SuppressionOrigin | undefined): RecipientResult | undefined {
  if (!origin) return undefined;
  return {
    kind: 'suppressed',
    reason: origin === 'complaint' ? 'previous_complaint' : origin === 'bounce' ? 'previous_bounce' : undefined,
  };
}
