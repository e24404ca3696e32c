// This process's traffic shaping, written for GET /deliverability/providers: every few seconds the rows
// that changed (and, while nothing changes, a refresh that says the process still runs), at once (at most
// one such write per SNAPSHOT_AT_ONCE_GAP_MS) when a named provider pushes back or is held, and none left
// when the process stops.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { createIntervalJob, reportDatabaseOutage, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import type { ProviderState, ShapingEvent } from '../../delivery/index.ts';
import {
  deleteShapingRows,
  pruneStaleShapingRows,
  writeShapingRows,
  type ShapingProcess,
} from '../db/provider-shaping.ts';
import {
  shapingRowsOf,
  snapshotChanges,
  writesAtOnce,
  SNAPSHOT_AT_ONCE_GAP_MS,
  SNAPSHOT_EVERY_MS,
  SNAPSHOT_KEPT_MS,
  SNAPSHOT_REFRESH_MS,
  type ShapingRow,
} from '../domain/provider-shaping.ts';
import { createPacedWrite } from './paced-write.ts';

export type ShapingSnapshots = {
  /**
   * Told each shaping event (the shaper's onChange): a named provider pushing back or held is written at
   * once, so the view shows a hold as it begins, but not within SNAPSHOT_AT_ONCE_GAP_MS of the last such
   * write (then at the gap's end); any other event waits for the next turn. Its promise: that write's.
   */
  changed: (key: string, event: ShapingEvent) => Promise<void>;
  /** Writes now; after a write under way when one is. Nothing once stopped. */
  write: () => Promise<void>;
  /** Writes on its interval from start; stop waits for a write under way, then deletes the process's rows. */
  part: { name: string; start: () => void; stop: () => Promise<void> };
};

export function createShapingSnapshots(deps: {
  db: Kysely<SenderDb>;
  logger: Logger;
  /** The shaper's states (Shaper.states). */
  states: () => ProviderState[];
  /** The local address this process's SMTP sessions leave from, once one has opened. */
  sendingIp: () => string | null;
  /** How this process is named in the view (default `host (pid n)`). */
  replica?: string;
  everyMs?: number;
  refreshMs?: number;
  now?: () => number;
}): ShapingSnapshots {
  const processId = randomUUID();
  const replica = deps.replica ?? `${hostname()} (pid ${process.pid})`;
  const refreshMs = deps.refreshMs ?? SNAPSHOT_REFRESH_MS;
  const now = deps.now ?? Date.now;
  /** What the table holds of this process, and when each row was written (this process's clock). */
  const written = new Map<string, { row: ShapingRow; at: number }>();
  let writtenIp: string | null = null;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;

  async function writeChanges(): Promise<void> {
    const sendingIp = deps.sendingIp();
    // Each row carries the address: a new one is written on all of them.
    if (sendingIp !== writtenIp) for (const entry of written.values()) entry.at = -Infinity;
    const at = now();
    const { upsert, remove } = snapshotChanges(written, shapingRowsOf(deps.states()), at, refreshMs);
    const self: ShapingProcess = { processId, replica, sendingIp };
    await writeShapingRows(deps.db, self, upsert);
    for (const row of upsert) written.set(row.key, { row, at });
    writtenIp = sendingIp;
    await deleteShapingRows(deps.db, processId, remove);
    for (const key of remove) written.delete(key);
  }

  /** One write at a time; a call during one asks for another after it. */
  function flush(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await writeChanges();
        } while (again && !stopped);
      } catch (err) {
        if (!reportDatabaseOutage(err)) deps.logger.warn({ err }, 'traffic shaping snapshot not written');
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  const tick = createIntervalJob({
    name: 'shaping-snapshots',
    everyMs: deps.everyMs ?? SNAPSHOT_EVERY_MS,
    logger: deps.logger,
    run: flush,
  });
  const write = () => (stopped ? Promise.resolve() : flush());
  const atOnce = createPacedWrite(write, SNAPSHOT_AT_ONCE_GAP_MS, now);
  const prune = createIntervalJob({
    name: 'shaping-snapshots-prune',
    everyMs: 60_000,
    logger: deps.logger,
    run: () => pruneStaleShapingRows(deps.db, SNAPSHOT_KEPT_MS),
  });

  return {
    changed: (key, event) => (writesAtOnce(key, event) ? atOnce.ask() : Promise.resolve()),
    write,
    part: {
      name: 'shaping-snapshots',
      start() {
        stopped = false;
        tick.start();
        prune.start();
      },
      async stop() {
        stopped = true;
        tick.stop();
        prune.stop();
        atOnce.stop();
        await running;
        try {
          await deleteShapingRows(deps.db, processId);
          written.clear();
        } catch (err) {
          // Left to go stale: the view stops showing them after SNAPSHOT_STALE_MS.
          if (!reportDatabaseOutage(err)) deps.logger.warn({ err }, 'traffic shaping snapshot not deleted');
        }
      },
    },
  };
}
