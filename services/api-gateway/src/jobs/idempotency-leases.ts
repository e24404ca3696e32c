// The leases of this gateway's idempotency keys in flight (db/idempotency.ts): taken with each claim, renewed
// while the request is in flight, let go once the owner's answer is stored or the claim released.
import type { Kysely } from 'kysely';
import { createIntervalJob, type IntervalJob, type Logger } from '@postline/platform';
import { renewIdempotencyLeases, type HeldClaim } from '../db/idempotency.ts';
import type { GatewayDb } from '../db/schema.ts';
import { IDEMPOTENCY_LEASE_MAX_HELD_MS, IDEMPOTENCY_LEASE_MS } from '../domain/idempotency.ts';

export type IdempotencyLeases = {
  /** How long a claim holds unrenewed: what claimIdempotencyKey takes. */
  leaseMs: number;
  /** The claim was taken by this gateway: renewed from now on. */
  hold: (claim: HeldClaim) => void;
  /** The claim is settled (stored, or released): no longer renewed. */
  letGo: (claim: HeldClaim) => void;
  /** Renews the held leases every fifth of `leaseMs`; stopped after HTTP (every request settled). */
  part: IntervalJob;
};

/** `leaseMs`: IDEMPOTENCY_LEASE_MS unless a test shortens it. */
export function createIdempotencyLeases(deps: {
  db: Kysely<GatewayDb>;
  logger: Logger;
  leaseMs?: number;
}): IdempotencyLeases {
  const leaseMs = deps.leaseMs ?? IDEMPOTENCY_LEASE_MS;
  // By claim id, with when it was taken: a claim held past any forward is let go (its request never settled).
  const held = new Map<string, { claim: HeldClaim; since: number }>();
  const part = createIntervalJob({
    name: 'idempotency-leases',
    everyMs: leaseMs / 5,
    logger: deps.logger,
    run: () => {
      const oldest = Date.now() - IDEMPOTENCY_LEASE_MAX_HELD_MS;
      for (const [id, { since }] of held) if (since < oldest) held.delete(id);
      return renewIdempotencyLeases(
        deps.db,
        [...held.values()].map(({ claim }) => claim),
        leaseMs,
      );
    },
  });
  return {
    leaseMs,
    hold: (claim) => void held.set(claim.claimId, { claim, since: Date.now() }),
    letGo: (claim) => void held.delete(claim.claimId),
    part,
  };
}
