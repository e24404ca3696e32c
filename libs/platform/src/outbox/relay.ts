import { sql, type Kysely } from 'kysely';
import type { MessageEnvelope } from '@postline/contracts';
import type { Logger } from '../logger/logger.ts';
import type { Broker, PublishResult } from '../broker/broker.ts';
import type { ExchangeKind } from '../broker/topology.ts';
import { outboxChannel } from './tables.ts';
import { isDatabaseUnavailable, PREPARED } from '../db/db.ts';
import { outageLog } from '../logger/outage-log.ts';
import { createWakeup } from '../lifecycle/wakeup.ts';
import { listenChannel, type ChannelListener } from '../db/listen.ts';

export type OutboxRelayOptions<DB> = {
  /** The service's database (search_path = its schema), where `outbox` lives. */
  db: Kysely<DB>;
  /** Same database, for the dedicated LISTEN connection (a pooled connection cannot hold a LISTEN). */
  databaseUrl: string;
  broker: Broker;
  logger: Logger;
  schema: string;
  /** Rows claimed per transaction. Default 100. */
  batchSize?: number;
  /** Poll interval when no notification arrives (missed NOTIFY, LISTEN connection down). Default 1 s. */
  pollMs?: number;
  /** Rows marked published (as earlier relays left them) are deleted once older than this. Default 24 h. */
  retentionMs?: number;
  /** Inbox rows are deleted once older than this; redeliveries after it are not deduplicated. Default 7 days. */
  inboxRetentionMs?: number;
  /** How often pruning runs. Default 60 s. */
  pruneEveryMs?: number;
};

export type OutboxRelay = {
  /** Starts the background loop and returns; the loop outlives database and broker outages. */
  start(): Promise<void>;
  /** Stops the loop and the LISTEN connection; waits for the batch in flight (bounded by the publish timeout). */
  stop(): Promise<void>;
};

type Row = { id: string; exchange: ExchangeKind; routing_key: string; envelope: MessageEnvelope };

/**
 * Publishes committed outbox rows. Each batch is claimed with FOR UPDATE SKIP LOCKED, so replicas share the
 * work without publishing a row twice, and in the same transaction the rows the broker confirmed are
 * deleted: a delete writes no new row version, where marking the row published would copy each envelope
 * into a new one with two index entries.
 * While RabbitMQ is down nothing is claimed; the backlog goes out when it reconnects.
 *
 * @example
 * const relay = createOutboxRelay({ db, databaseUrl: config.databaseUrl, broker, logger, schema: 'sender' });
 * await relay.start();
 */
export function createOutboxRelay<DB>(opts: OutboxRelayOptions<DB>): OutboxRelay {
  const { db, broker, schema } = opts;
  const log = opts.logger.child({ component: 'outbox-relay', schema });
  const batchSize = opts.batchSize ?? 100;
  const pollMs = opts.pollMs ?? 1_000;
  const retentionMs = opts.retentionMs ?? 24 * 3600_000;
  const inboxRetentionMs = opts.inboxRetentionMs ?? 7 * 24 * 3600_000;
  const pruneEveryMs = opts.pruneEveryMs ?? 60_000;
  const channel = outboxChannel(schema);

  let stopping = false;
  let loop: Promise<void> | undefined;
  let listener: ChannelListener | undefined;
  const wakeup = createWakeup();
  let lastPrune = 0;
  const cleanups: Array<() => void> = [];

  const signal = () => wakeup.signal();
  const outage = outageLog(opts.logger, 'PostgreSQL', opts.databaseUrl);

  async function publishBatch(): Promise<{ claimed: number; published: number }> {
    return db.transaction().execute(async (trx) => {
      const { rows } = await sql<Row>`select ${PREPARED} id, exchange, routing_key, envelope from outbox
        where published_at is null order by id limit ${batchSize} for update skip locked`.execute(trx);
      if (rows.length === 0) return { claimed: 0, published: 0 };
      const results = await Promise.all(
        rows.map((row) =>
          broker.publish(broker.exchanges[row.exchange], row.routing_key, Buffer.from(JSON.stringify(row.envelope)), {
            messageId: row.id,
            type: row.routing_key,
          }),
        ),
      );
      const done = rows.filter((row, i) => settled(row, results[i]));
      if (done.length > 0) {
        await sql`delete ${PREPARED} from outbox where id = any(${done.map((r) => r.id)}::uuid[])`.execute(trx);
      }
      if (done.length < rows.length) {
        const reasons = results.flatMap((r) => (r && !r.ok ? [r.reason] : []));
        log.warn(
          { claimed: rows.length, published: done.length, reasons: [...new Set(reasons)] },
          'outbox publish incomplete',
        );
      }
      return { claimed: rows.length, published: done.length };
    });
  }

  function settled(row: Row, result: PublishResult | undefined): boolean {
    if (!result) return false;
    if (result.ok) return true;
    // An event no queue is bound for has no subscriber to wait for; commands are parked by the alternate
    // exchange and never come back as returned.
    if (result.reason === 'returned' && row.exchange === 'events') {
      log.debug({ id: row.id, routing_key: row.routing_key }, 'event had no subscriber');
      return true;
    }
    return false;
  }

  async function prune(): Promise<void> {
    if (Date.now() - lastPrune < pruneEveryMs) return;
    lastPrune = Date.now();
    const outbox =
      await sql`delete from outbox where published_at < now() - make_interval(secs => ${retentionMs / 1000})`.execute(
        db,
      );
    const inbox =
      await sql`delete from inbox where processed_at < now() - make_interval(secs => ${inboxRetentionMs / 1000})`.execute(
        db,
      );
    const deleted = Number(outbox.numAffectedRows ?? 0n) + Number(inbox.numAffectedRows ?? 0n);
    if (deleted > 0)
      log.debug({ outbox: Number(outbox.numAffectedRows ?? 0n), inbox: Number(inbox.numAffectedRows ?? 0n) }, 'pruned');
  }

  async function run(): Promise<void> {
    let failures = 0;
    while (!stopping) {
      wakeup.clear();
      let more = false;
      try {
        if (broker.isConnected()) {
          const { claimed, published } = await publishBatch();
          // A full, fully published batch means more may be waiting: go again without sleeping.
          more = claimed === batchSize && published === claimed;
        }
        await prune();
        failures = 0;
        outage.recovered();
      } catch (err) {
        failures++;
        if (isDatabaseUnavailable(err)) outage.failed(err);
        else log.error({ err }, 'outbox relay pass failed');
      }
      // After failures (the database down) the pause grows, up to 5 s: the backlog of an outage goes out
      // within seconds of its end, and the LISTEN reconnecting wakes the loop sooner.
      if (!more && !stopping) await wakeup.sleep(failures > 0 ? Math.min(pollMs * 2 ** failures, 5_000) : pollMs);
    }
  }

  return {
    async start() {
      if (loop) return;
      stopping = false;
      // Reconnected: the backlog accumulated while the broker was down can go now.
      cleanups.push(await broker.addSetup(() => Promise.resolve(signal())));
      const unwatch = broker.metrics?.watchOutbox({
        schema,
        read: async () => {
          const { rows } = await sql<{ pending: number; age: number | null }>`select count(*)::int as pending,
            extract(epoch from now() - min(created_at))::float8 as age from outbox where published_at is null`.execute(
            db,
          );
          return { pending: rows[0]?.pending ?? 0, oldestAgeSeconds: Math.max(0, rows[0]?.age ?? 0) };
        },
      });
      if (unwatch) cleanups.push(unwatch);
      loop = run();
      // The poll covers the gaps while the LISTEN connection is down.
      listener = listenChannel({
        databaseUrl: opts.databaseUrl,
        channel,
        logger: log,
        applicationName: `${schema}-outbox-listen`,
        onNotification: signal,
        onListening: signal, // rows may have been committed while nobody was listening
        retryMs: pollMs,
      });
    },
    async stop() {
      stopping = true;
      for (const cleanup of cleanups.splice(0)) cleanup();
      wakeup.signal();
      await Promise.all([loop, listener?.stop()]);
      loop = undefined;
      listener = undefined;
    },
  };
}
