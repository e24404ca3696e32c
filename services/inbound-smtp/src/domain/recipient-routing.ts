// Where the MX takes a recipient (only hosted domains and the return-path domains; the MX
// is never a relay): to a team's received emails, to the return-path mail of a team's domain (bounces,
// complaints, unsubscribe requests), to a domain's DMARC aggregate reports (dmarc-report-address.ts),
// or nowhere (550 5.1.1 with the reason).
import { acceptsReturnPathLocalPart } from './return-path-address.ts';

/** What the MX knows of a domain (its read model's row). */
export type KnownDomain = {
  team_id: string;
  name: string;
  return_path: string;
  receiving_verified: boolean;
};

export type RecipientRoute =
  | { kind: 'received'; teamId: string }
  | { kind: 'return-path'; teamId: string; returnPath: string }
  | { kind: 'dmarc-report'; teamId: string; domainId: string; domainName: string }
  | { kind: 'refused'; reason: RefusalReason };

/** `unknown`: no domain of ours; `not-receiving`: ours but its receiving is not enabled and verified. */
/** `not-a-report-address`: at our MX host, but no live domain's DMARC report address. */
export type RefusalReason = 'unknown' | 'not-receiving' | 'not-a-return-path-mailbox' | 'not-a-report-address';

/**
 * The route of `local@host` (`host` lower-case, A-labels), given the live domains named `host` or whose
 * return path it is (newest first). A verified receiving domain wins over a return path of the same name.
 */
export function routeRecipient(local: string, host: string, domains: readonly KnownDomain[]): RecipientRoute {
  const receiving = domains.find((domain) => domain.name === host && domain.receiving_verified);
  if (receiving) return { kind: 'received', teamId: receiving.team_id };
  const returnPath = domains.find((domain) => domain.return_path === host);
  if (returnPath) {
    return acceptsReturnPathLocalPart(local)
      ? { kind: 'return-path', teamId: returnPath.team_id, returnPath: host }
      : { kind: 'refused', reason: 'not-a-return-path-mailbox' };
  }
  return { kind: 'refused', reason: domains.some((domain) => domain.name === host) ? 'not-receiving' : 'unknown' };
}
