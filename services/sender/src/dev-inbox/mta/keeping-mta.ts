// The development inbox's side of the MTA: a message it keeps goes into the install's own mailbox instead of
// its recipients' servers, after being composed, tracked and signed exactly as it would have gone out, and
// its recipients get the delivered result (and events) any delivery gives.
import type { Kysely } from 'kysely';
import { newId, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import type { Mta, RecipientOutcome } from '../../delivery/index.ts';
import { keepMessage } from '../db/messages.ts';

/** The MX name kept messages report (on their attempts and in the delivered event's reply). */
export const DEV_INBOX_MX = 'dev-inbox';
const KEPT_REPLY = '250 2.0.0 Kept in the development inbox; nothing left this install';

/**
 * An MTA that keeps every message (`all`: DEV_INBOX on) or only those the delivery asks to keep (the onboarding
 * sender's to a team's members), and sends the rest through `network`.
 */
export function createKeepingMta(opts: {
  db: Kysely<SenderDb>;
  network: Mta;
  all: boolean;
  logger: Logger;
  now?: () => Date;
}): Mta {
  const now = opts.now ?? (() => new Date());
  let keeping = 0;
  return {
    async deliver(request) {
      if (!opts.all && !request.keep) return opts.network.deliver(request);
      if (!request.origin) throw new Error('a message kept in the development inbox needs its team and email');
      const startedAt = now();
      keeping++;
      try {
        await keepMessage(opts.db, {
          id: newId(),
          teamId: request.origin.teamId,
          emailId: request.origin.emailId,
          envelopeFrom: request.envelopeFrom,
          recipients: request.recipients,
          raw: request.raw,
        });
      } finally {
        keeping--;
      }
      request.trace?.push({
        mx: DEV_INBOX_MX,
        ip: null,
        port: null,
        tls: null,
        startedAt,
        durationMs: now().getTime() - startedAt.getTime(),
        recipients: [...request.recipients],
        lines: [
          `* Kept in the development inbox (${opts.all ? 'DEV_INBOX is on' : 'the onboarding sender writes to team members there'}): no MX lookup, no connection`,
          `* MAIL FROM:<${request.envelopeFrom}>`,
          ...request.recipients.map((recipient) => `* RCPT TO:<${recipient}>`),
          `* ${request.raw.length} bytes kept`,
        ],
        omitted: 0,
      });
      return request.recipients.map(
        (recipient): RecipientOutcome => ({
          status: 'delivered',
          recipient,
          code: 250,
          response: KEPT_REPLY,
          mx: DEV_INBOX_MX,
        }),
      );
    },
    // A kept message goes to no provider: only one the network would send can be held.
    held: (request) => (opts.all || request.keep ? Promise.resolve(undefined) : opts.network.held(request)),
    inFlight: () => opts.network.inFlight() + keeping,
    close: () => opts.network.close(),
  };
}
