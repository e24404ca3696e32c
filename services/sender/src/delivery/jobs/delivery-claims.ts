// The claims of this process's delivery attempts (db/delivery-claims.ts): taken before each SMTP
// transaction, kept fresh until the attempt's record commits or the attempt is given up, pruned by age.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createIntervalJob, type Logger } from '@postline/platform';
import {
  claimDelivery,
  pruneClaims,
  refreshClaims,
  type ClaimResult,
  type DeliveryClaim,
} from '../db/delivery-claims.ts';
import type { SenderDb } from '../../db/schema.ts';

/** A claim not refreshed for this long is taken by a copy of its command: its process is gone. */
export const CLAIM_STALE_MS = 10_000;
/** Claims older than this are deleted: their attempts were recorded or given up long ago. */
const CLAIM_KEPT_MS = 24 * 60 * 60 * 1000;

export type DeliveryClaims = {
  /** Claims an attempt for this process (see claimDelivery); a claimed one is held until `release`. */
  claim: (claim: DeliveryClaim) => Promise<ClaimResult>;
  /** The attempt is recorded, or given up: its claim is no longer refreshed, and goes stale. */
  release: (claim: DeliveryClaim) => void;
  /** Refreshes the claims held and prunes old ones; stopped after the consumers (every attempt settled). */
  part: { name: string; start: () => void; stop: () => void };
};

/** `staleMs`: CLAIM_STALE_MS unless a test shortens it; claims held are refreshed five times as often. */
export function createDeliveryClaims(deps: { db: Kysely<SenderDb>; logger: Logger; staleMs?: number }): DeliveryClaims {
  const instanceId = randomUUID();
  const staleMs = deps.staleMs ?? CLAIM_STALE_MS;
  const held = new Map<string, DeliveryClaim>();
  const keyOf = (claim: DeliveryClaim) => `${claim.emailId} ${claim.firstPosition} ${claim.attempt}`;
  const refresh = createIntervalJob({
    name: 'delivery-claims-refresh',
    everyMs: staleMs / 5,
    logger: deps.logger,
    run: () => refreshClaims(deps.db, instanceId, [...held.values()]),
  });
  // A job of its own: a slow prune never holds up a refresh.
  const prune = createIntervalJob({
    name: 'delivery-claims-prune',
    everyMs: 60_000,
    logger: deps.logger,
    run: () => pruneClaims(deps.db, CLAIM_KEPT_MS),
  });
  return {
    async claim(claim) {
      const result = await claimDelivery(deps.db, claim, instanceId, staleMs);
      if (result.kind === 'claimed') held.set(keyOf(claim), claim);
      return result;
    },
    release: (claim) => void held.delete(keyOf(claim)),
    part: {
      name: 'delivery-claims',
      start() {
        refresh.start();
        prune.start();
      },
      // Claims still held (an attempt cut short by the stop) are left to go stale: their outcome is unknown.
      stop() {
        refresh.stop();
        prune.stop();
      },
    },
  };
}
