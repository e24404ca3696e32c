// The claims of this process's delivery attempts (db/delivery-claims.ts): taken before each SMTP
// transaction, kept fresh while it is under way, given up at shutdown, pruned by age.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createIntervalJob, type Logger } from '@postline/platform';
import { claimDelivery, pruneClaims, refreshClaims, releaseClaims, type ClaimResult, type DeliveryClaim } from '../db/delivery-claims.ts';
import type { SenderDb } from '../db/schema.ts';

/** A claim not refreshed for this long is taken by a copy of its command: its process is gone. */
export const CLAIM_STALE_MS = 10_000;
/** Claims older than this are deleted: their attempts were recorded or given up long ago. */
const CLAIM_KEPT_MS = 24 * 60 * 60 * 1000;

export type DeliveryClaims = {
  /** Claims an attempt for this process (see claimDelivery); a claimed one counts as under way until `release`. */
  claim: (claim: DeliveryClaim) => Promise<ClaimResult>;
  /** The attempt is over (its SMTP transaction ended, or it was not made): its claim is no longer refreshed. */
  release: (claim: DeliveryClaim) => void;
  /** Refreshes the claims under way; prunes old ones now and then; gives up this process's claims at stop. */
  part: { name: string; start: () => void; stop: () => Promise<void> };
};

/** `staleMs`: CLAIM_STALE_MS unless a test shortens it; claims under way are refreshed five times as often. */
export function createDeliveryClaims(deps: { db: Kysely<SenderDb>; now: () => Date; logger: Logger; staleMs?: number }): DeliveryClaims {
  const instanceId = randomUUID();
  const staleMs = deps.staleMs ?? CLAIM_STALE_MS;
  const underWay = new Map<string, DeliveryClaim>();
  const keyOf = (claim: DeliveryClaim) => `${claim.emailId} ${claim.firstPosition} ${claim.attempt}`;
  let beats = 0;
  const refresh = createIntervalJob({
    name: 'delivery-claims-refresh',
    everyMs: staleMs / 5,
    logger: deps.logger,
    run: async () => {
      const now = deps.now();
      await refreshClaims(deps.db, instanceId, [...underWay.values()], now);
      // About once a minute.
      if (++beats % Math.ceil(60_000 / (staleMs / 5)) === 0) await pruneClaims(deps.db, new Date(now.getTime() - CLAIM_KEPT_MS));
    },
  });
  return {
    async claim(claim) {
      const now = deps.now();
      const result = await claimDelivery(deps.db, claim, instanceId, now, new Date(now.getTime() - staleMs));
      if (result.kind === 'claimed') underWay.set(keyOf(claim), claim);
      return result;
    },
    release: (claim) => void underWay.delete(keyOf(claim)),
    part: {
      name: 'delivery-claims',
      start: () => refresh.start(),
      async stop() {
        refresh.stop();
        await releaseClaims(deps.db, instanceId).catch((err: unknown) => deps.logger.warn({ err }, 'giving up delivery claims failed; they go stale'));
      },
    },
  };
}
