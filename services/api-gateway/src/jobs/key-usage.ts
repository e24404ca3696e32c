import type { Kysely } from 'kysely';
import type { Logger } from '@postline/platform';
import { touchKeysLastUsed } from '../db/api-keys.ts';
import type { GatewayDb } from '../db/schema.ts';

/**
 * `last_used_at` written behind the requests: uses are collected in memory and flushed every few
 * seconds in one statement, so a busy key costs no write per request.
 */
export function createKeyUsageTracker(deps: { db: Kysely<GatewayDb>; logger: Logger; flushIntervalMs?: number }) {
  let pending = new Map<string, Date>();
  let timer: NodeJS.Timeout | undefined;
  const flush = async () => {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      await touchKeysLastUsed(deps.db, batch);
    } catch (err) {
      deps.logger.warn({ err }, 'could not record api key use');
      for (const [id, at] of batch) if (!pending.has(id)) pending.set(id, at);
    }
  };
  return {
    markUsed: (keyId: string, at: Date) => {
      pending.set(keyId, at);
    },
    flush,
    start: () => {
      timer = setInterval(() => void flush(), deps.flushIntervalMs ?? 2000);
      timer.unref();
    },
    stop: async () => {
      if (timer) clearInterval(timer);
      await flush();
    },
  };
}
