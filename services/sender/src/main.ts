// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts.
import { createHash } from 'node:crypto';
import { Counter, createSecretBox, createServiceRuntime, Gauge, Histogram, SEND_EMAIL_BODY } from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import { createDeliverConsumer } from './consumers/deliver.ts';
import { createDomainStateConsumer } from './consumers/domain-state.ts';
import { createFeedbackConsumer } from './consumers/feedback.ts';
import { createExpireSuppressionConsumer, createSendScheduledConsumer } from './consumers/scheduled.ts';
import { createAttemptLoader } from './db/attempts.ts';
import type { SenderDb } from './db/schema.ts';
import { waitingRecipients } from './db/waiting.ts';
import type { DeliverDeps } from './deliver.ts';
import { internalRoutes } from './http/routes.ts';
import { createLinkSigner } from './domain/links.ts';
import { createSingleAccepts, pruneAcceptedRequests } from './accept.ts';
import { createByteBudget } from './mta/budget.ts';
import { createComposerPool, defaultComposerThreads } from './mta/composer.ts';
import { createMxResolver } from './mta/mx.ts';
import { createMta } from './mta/smtp.ts';

const config = loadConfig();
// Bursts of accepted emails queue many outbox rows at once (a batch of 100 writes 200).
const runtime = createServiceRuntime<SenderDb>({ service: 'sender', schema: SCHEMA, config, relayBatchSize: 500 });
const { db, logger, metrics, broker } = runtime;
const registers = [metrics.registry];
const now = () => new Date();

const accepted = new Counter({ name: 'emails_accepted_total', help: 'Emails accepted, by request kind', labelNames: ['kind'] as const, registers });
const outcomes = new Counter({
  name: 'email_recipient_outcomes_total',
  help: 'Recipient outcomes of delivery attempts',
  labelNames: ['outcome'] as const,
  registers,
});
const smtpDuration = new Histogram({
  name: 'smtp_delivery_duration_seconds',
  help: 'One delivery attempt: compose, sign, MX lookup and the SMTP transaction',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers,
});
new Gauge({
  name: 'email_recipients_waiting',
  help: 'Recipients not yet in a final state (pending a first attempt, or deferred), by status',
  labelNames: ['status'] as const,
  registers,
  async collect() {
    const rows = await waitingRecipients(db);
    this.reset();
    oldestWaiting.reset();
    for (const row of rows) {
      this.set({ status: row.status }, row.n);
      oldestWaiting.set({ status: row.status }, row.oldest ?? 0);
    }
  },
});
// Registered after the gauge whose collect sets it, so a scrape shows this scrape's figure.
const oldestWaiting = new Gauge({
  name: 'email_recipients_oldest_waiting_age_seconds',
  help: 'Age of the oldest recipient not yet in a final state, by status',
  labelNames: ['status'] as const,
  registers,
});

const mta = createMta({
  resolver: createMxResolver({ servers: config.DNS_SERVERS, timeoutMs: config.DNS_TIMEOUT_MS, allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS }),
  port: config.MX_DELIVERY_PORT,
  heloName: config.SMTP_HELO_NAME,
  allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
  logger,
});

const composer = createComposerPool({ threads: defaultComposerThreads(), logger });
// Messages being composed and sent hold at most this much memory, whatever DELIVERY_CONCURRENCY is.
const MESSAGE_MEMORY_BYTES = 256 * 1024 * 1024;

const deliverDeps: DeliverDeps = {
  db,
  mta,
  box: createSecretBox(config.POSTLINE_SECRET_KEY),
  // Its own key, derived: a leaked VERP tag key must not open the secret box, nor the other way round.
  verpKey: createHash('sha256').update(`postline-verp:${config.POSTLINE_SECRET_KEY}`).digest('hex'),
  scale: config.POSTLINE_DELAY_SCALE,
  now,
  logger,
  // The reads of attempts arriving within 10 ms share one statement: commands arrive one by one as earlier
  // ones are acked, so without the wait each read held 4 or 5 of them under load.
  load: createAttemptLoader(db, { maxWaitMs: 10 }),
  composer,
  budget: createByteBudget(MESSAGE_MEMORY_BYTES),
  observe: (results, seconds) => {
    smtpDuration.observe(seconds);
    for (const r of results) outcomes.inc({ outcome: r.kind });
  },
};

const consumers = [
  createDomainStateConsumer({ broker, db, logger }),
  createDeliverConsumer({ ...deliverDeps, broker, concurrency: config.DELIVERY_CONCURRENCY }),
  createSendScheduledConsumer({ broker, db, logger }),
  createExpireSuppressionConsumer({ broker, db, logger, now }),
  createFeedbackConsumer({ broker, db, logger, now }),
];

// Idempotency keys past their day, once a minute.
let pruner: NodeJS.Timeout | undefined;
const prune = {
  name: 'idempotency-prune',
  start: () => {
    pruner = setInterval(() => {
      pruneAcceptedRequests(db, now()).catch((err: unknown) => logger.warn({ err }, 'idempotency prune failed'));
    }, 60_000);
    pruner.unref();
  },
  stop: () => clearInterval(pruner),
};

await runtime.start({
  routes: (app) =>
    app.use(
      internalRoutes({ db, now, accepted, singles: createSingleAccepts(db), links: createLinkSigner(config.POSTLINE_SECRET_KEY), publicBaseUrl: config.PUBLIC_BASE_URL }),
    ),
  largeBodies: [SEND_EMAIL_BODY],
  // Parts stop in reverse: the consumers first (letting attempts in flight finish and be recorded), then
  // the composer threads and the MTA's idle sessions.
  parts: [
    { name: 'mta', start: () => undefined, stop: () => mta.close() },
    { name: 'composer', start: () => undefined, stop: () => composer.close() },
    prune,
    ...consumers.map((c, i) => ({ name: `consumer ${i}`, start: () => c.start(), stop: () => c.stop() })),
  ],
});
