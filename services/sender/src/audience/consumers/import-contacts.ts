import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { runContactImport, type ImportRunOutcome } from '../use-cases/contact-imports.ts';

/** Rows written per transaction: large enough that a chunk's statements cost little per row. */
const CHUNK_ROWS = 2000;
/**
 * A run longer than this hands the rest of its import over to a new command, so that one large import
 * does not hold the queue (nor an unacked delivery) for long.
 */
const RUN_MS = 2 * 60 * 1000;

/**
 * `sender.import-contacts`: runs (or resumes) a contact import. The run commits chunk by chunk in its own
 * transactions, so it is done in the consumer's `prepare`, before (and not inside) the one transaction the
 * consumer opens per message; redelivering the command resumes the import where its last chunk left it,
 * so no inbox row is needed. A shutdown is noticed between chunks: the run hands the rest over to a new
 * command and the delivery is acked.
 */
export function createImportContactsConsumer(deps: {
  broker: Broker;
  db: Kysely<SenderDb>;
  logger: Logger;
  now: () => Date;
}): Consumer {
  let stopping = false;
  const log = deps.logger.child({ consumer: 'sender.import-contacts' });
  const consumer = createConsumer<SenderDb, 'sender.import-contacts', ImportRunOutcome | undefined>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'import-contacts',
    bindings: [{ exchange: 'commands', routingKey: 'sender.import-contacts' }],
    logger: deps.logger,
    // One import at a time per process: a run holds its file in memory and keeps a core busy.
    prefetch: 1,
    inbox: false,
    prepare: async (message) => {
      if (!message.team_id) return undefined;
      const runDeps = { db: deps.db, now: deps.now, chunkRows: CHUNK_ROWS, runMs: RUN_MS };
      const outcome = await runContactImport(runDeps, message.team_id, message.data.import_id, () => stopping);
      log.info({ import_id: message.data.import_id, outcome }, 'contact import run ended');
      return outcome;
    },
    handle: () => Promise.resolve(),
  });
  return {
    queues: consumer.queues,
    start: () => {
      stopping = false;
      return consumer.start();
    },
    stop: () => {
      stopping = true;
      return consumer.stop();
    },
  };
}
