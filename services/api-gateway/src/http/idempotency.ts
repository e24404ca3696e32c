import type { RequestHandler, Response } from 'express';
import type { Kysely } from 'kysely';
import { ApiError, type Logger } from '@postline/platform';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../db/idempotency.ts';
import type { GatewayDb } from '../db/schema.ts';
import { IDEMPOTENCY_TTL_SECONDS, rawRequestHash, requestHash, validIdempotencyKey } from '../domain/idempotency.ts';
import { isIdempotentRoute, normalizePath } from '../domain/routes.ts';
import type { IdempotencyLeases } from '../jobs/idempotency-leases.ts';
import { authOf, heldOf, type HeldKey } from './context.ts';
import { sendForwarded, type ForwardHooks } from './forward.ts';
import { rawEmailOf } from './raw-email.ts';

/**
 * `Idempotency-Key` on POST /emails (JSON or raw) and /emails/batch, per team, kept 24 hours: the same key and body
 * replay the stored response byte for byte; another body → 409 invalid_idempotent_request; the same key
 * still in flight → 409 concurrent_idempotent_requests. A key in flight is held by a lease this gateway
 * renews until the request settles (`leases`): a key whose gateway died is taken over once its lease ran out.
 */
export function idempotency(deps: { db: Kysely<GatewayDb>; leases: IdempotencyLeases }): RequestHandler {
  return async (req, res, next) => {
    const key = req.header('idempotency-key');
    if (key === undefined || !isIdempotentRoute(req.method, req.path)) return next();
    if (!validIdempotencyKey(key)) {
      throw new ApiError(400, 'invalid_idempotency_key', 'The key must be between 1-256 chars.');
    }
    const { teamId } = authOf(res);
    const raw = rawEmailOf(res);
    const hash = raw
      ? rawRequestHash(req.method, normalizePath(req.path), { from: raw.envelopeFrom, to: raw.envelopeTo }, raw.bytes)
      : requestHash(
          req.method,
          normalizePath(req.path),
          req.body,
          req.header('x-batch-validation') ?? req.header('x-resend-batch-validation'),
        );
    const claim = await claimIdempotencyKey(deps.db, {
      teamId,
      key,
      requestHash: hash,
      ttlSeconds: IDEMPOTENCY_TTL_SECONDS,
      leaseMs: deps.leases.leaseMs,
    });
    if (claim.kind === 'claimed') {
      const held: HeldKey = { teamId, key, hash, claimId: claim.claimId, forwarded: false, settled: false };
      deps.leases.hold(held);
      res.locals.idempotency = held;
      // A request that ends before it was forwarded (an error in between, a client that went away) must
      // not leave the key looking in flight. Once forwarded, the owner may act on it: the key stays held
      // until the owner's answer is stored (or the forward failed), even if the client has gone.
      res.on('close', () => {
        if (!held.forwarded && !held.settled) {
          held.settled = true;
          deps.leases.letGo(held);
          void releaseIdempotencyKey(deps.db, teamId, key, held.claimId).catch(() => undefined);
        }
      });
      return next();
    }
    const { record } = claim;
    if (record.request_hash !== hash) {
      throw new ApiError(
        409,
        'invalid_idempotent_request',
        'Same idempotency key used with a different request payload. Change your idempotency key or payload.',
      );
    }
    if (record.state === 'in_flight' || record.response_status === null || record.response_body === null) {
      throw new ApiError(
        409,
        'concurrent_idempotent_requests',
        'Same idempotency key used while the original request is still in progress. Try the request again later.',
      );
    }
    res.setHeader('idempotent-replayed', 'true');
    sendForwarded(res, {
      status: record.response_status,
      contentType: record.response_headers?.['content-type'] ?? 'application/json; charset=utf-8',
      body: record.response_body,
    });
  };
}

/**
 * Stores the owner's answer under the held key. A 5xx, or a forward that failed without an answer (the owner
 * could not be reached, cut the connection or did not answer in time), releases the key instead, so that
 * the client's retry with the same key is forwarded at once rather than refused or replaying a failure. The
 * owner may have acted on the first request (its answer lost on the way): it keeps its own record of the key
 * and answers the retry with what it did, so the retry never sends twice.
 */
export function idempotencyHooks(deps: {
  db: Kysely<GatewayDb>;
  logger: Logger;
  leases: IdempotencyLeases;
}): ForwardHooks {
  /** The held key is settled: no longer renewed (its row is stored or released, or left to its lease). */
  const settle = (res: Response): HeldKey | undefined => {
    const held = heldOf(res);
    if (!held) return undefined;
    held.settled = true;
    deps.leases.letGo(held);
    return held;
  };
  return {
    onForwarding(res) {
      const held = heldOf(res);
      if (held) held.forwarded = true;
    },
    async onResponse(res, answer) {
      const held = settle(res);
      if (!held) return;
      // The owner has answered: whatever happens to the stored copy, the client gets that answer.
      try {
        if (answer.status >= 500) await releaseIdempotencyKey(deps.db, held.teamId, held.key, held.claimId);
        else {
          await completeIdempotencyKey(deps.db, {
            teamId: held.teamId,
            key: held.key,
            claimId: held.claimId,
            status: answer.status,
            headers: { 'content-type': answer.contentType },
            body: answer.body,
          });
        }
      } catch (err) {
        deps.logger.error(
          { err },
          'could not store the idempotent response; the key is taken over once its lease runs out',
        );
      }
    },
    async onFailed(res) {
      const held = settle(res);
      if (!held) return;
      // Not released (the database is away): its lease, no longer renewed, runs out within seconds.
      await releaseIdempotencyKey(deps.db, held.teamId, held.key, held.claimId).catch((err: unknown) =>
        deps.logger.error({ err }, 'could not release the idempotency key; it is taken over once its lease runs out'),
      );
    },
  };
}
