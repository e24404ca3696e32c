// The sender processes' traffic shaping snapshots (migration 202612111100_provider_shaping). Times of writing
// are the database's, so replicas' clocks never decide what is stale.
import { sql, type Kysely } from 'kysely';
import type { SenderDb } from '../../db/schema.ts';
import type { ReplicaShaping, ShapingRow } from '../domain/provider-shaping.ts';

/** The process a snapshot is of. */
export type ShapingProcess = { processId: string; replica: string; sendingIp: string | null };

/** Writes (or refreshes) the process's rows of `rows`' keys. */
export async function writeShapingRows(
  db: Kysely<SenderDb>,
  process: ShapingProcess,
  rows: readonly ShapingRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('provider_shaping')
    .values(
      rows.map((r) => ({
        process_id: process.processId,
        replica: process.replica,
        sending_ip: process.sendingIp,
        key: r.key,
        provider: r.provider,
        state: r.state,
        rate_per_minute: r.ratePerMinute,
        limit_per_minute: r.limitPerMinute,
        connections: r.connections,
        max_connections: r.maxConnections,
        max_messages_per_connection: r.maxMessagesPerConnection,
        deferrals: r.deferrals,
        reason: r.reason,
        held_until: r.heldUntil,
        servers_slowed: r.servers?.slowed ?? null,
        servers_held: r.servers?.held ?? null,
        servers_first_held_until: r.servers?.firstHeldUntil ?? null,
        updated_at: sql<Date>`now()`,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['process_id', 'key']).doUpdateSet((eb) => ({
        replica: eb.ref('excluded.replica'),
        sending_ip: eb.ref('excluded.sending_ip'),
        provider: eb.ref('excluded.provider'),
        state: eb.ref('excluded.state'),
        rate_per_minute: eb.ref('excluded.rate_per_minute'),
        limit_per_minute: eb.ref('excluded.limit_per_minute'),
        connections: eb.ref('excluded.connections'),
        max_connections: eb.ref('excluded.max_connections'),
        max_messages_per_connection: eb.ref('excluded.max_messages_per_connection'),
        deferrals: eb.ref('excluded.deferrals'),
        reason: eb.ref('excluded.reason'),
        held_until: eb.ref('excluded.held_until'),
        servers_slowed: eb.ref('excluded.servers_slowed'),
        servers_held: eb.ref('excluded.servers_held'),
        servers_first_held_until: eb.ref('excluded.servers_first_held_until'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** Deletes the process's rows of `keys`, or all of them. */
export async function deleteShapingRows(
  db: Kysely<SenderDb>,
  processId: string,
  keys?: readonly string[],
): Promise<void> {
  if (keys?.length === 0) return;
  let query = db.deleteFrom('provider_shaping').where('process_id', '=', processId);
  if (keys) query = query.where('key', 'in', keys);
  await query.execute();
}

/** Every process's rows written within `staleMs`: the processes running now. */
export async function readFreshShapingRows(db: Kysely<SenderDb>, staleMs: number): Promise<ReplicaShaping[]> {
  const rows = await db
    .selectFrom('provider_shaping')
    .selectAll()
    .where('updated_at', '>', sql<Date>`now() - make_interval(secs => ${staleMs / 1000})`)
    .execute();
  return rows.map((r) => ({
    key: r.key,
    provider: r.provider,
    state: r.state,
    ratePerMinute: r.rate_per_minute,
    limitPerMinute: r.limit_per_minute,
    connections: r.connections,
    maxConnections: r.max_connections,
    maxMessagesPerConnection: r.max_messages_per_connection,
    deferrals: r.deferrals,
    reason: r.reason,
    heldUntil: r.held_until,
    servers:
      r.servers_slowed === null || r.servers_held === null
        ? null
        : { slowed: r.servers_slowed, held: r.servers_held, firstHeldUntil: r.servers_first_held_until },
    processId: r.process_id,
    replica: r.replica,
    sendingIp: r.sending_ip,
    updatedAt: r.updated_at,
  }));
}

/** Deletes the rows of processes gone for `keptMs` (killed: a process that stops deletes its own). */
export async function pruneStaleShapingRows(db: Kysely<SenderDb>, keptMs: number): Promise<void> {
  await db
    .deleteFrom('provider_shaping')
    .where('updated_at', '<', sql<Date>`now() - make_interval(secs => ${keptMs / 1000})`)
    .execute();
}
