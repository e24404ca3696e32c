// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts.
import { SEND_EMAIL_BODY } from '@postline/contracts';
import {
  createLinkSigner,
  createOpenedCache,
  createSecretBox,
  createRetentionPruner,
  createServiceRuntime,
  readTeamRetention,
  retentionPruneEveryMs,
  teamRetentionRoutes,
  verpKeyOf,
  type Consumer,
} from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import {
  createDeliverEmailConsumer,
  createFeedbackConsumer,
  createAttemptLoader,
  waitingRecipients,
  createDeliveryClaims,
  createComposerPool,
  defaultComposerThreads,
  createByteBudget,
  createDkimSigner,
  createMta,
  createMxResolver,
  createShaper,
  DEFAULT_SHAPING,
  readShapingFile,
  reloadShapingOnHangup,
  type DeliverDeps,
} from './delivery/index.ts';
import { createDevInboxPrune, createKeepingMta } from './dev-inbox/index.ts';
import { createDomainStateConsumer } from './sending-domains/index.ts';
import {
  createUnsubscribeMailConsumer,
  createTrackingCipher,
  createUnsubscribeSigner,
  createEmailTeamCache,
  createEngagementRecorder,
} from './engagement/index.ts';
import { createExpireSuppressionConsumer } from './suppressions/index.ts';
import { createFormTokens } from './forms/index.ts';
import { createImportContactsConsumer } from './audience/index.ts';
import {
  createDmarcLookup,
  createIdempotencyPrune,
  createMetricFold,
  createSendScheduledConsumer,
  createSingleAccepts,
} from './emails/index.ts';
import { createBroadcastFanOutConsumer, createBroadcastScheduledSendConsumer } from './broadcasts/index.ts';
import { createShapingSnapshots } from './deliverability/index.ts';
import type { SenderDb } from './db/schema.ts';
import { internalRoutes } from './http/routes.ts';
import { createSenderMetrics } from './metrics.ts';
import { countPauses, createReputationGuard, teamThresholdsRoutes } from './reputation/index.ts';
import { senderRetainedTables } from './retention/tables.ts';

const config = loadConfig();
// Bursts of accepted emails queue many outbox rows at once (a batch of 100 writes 200).
const runtime = createServiceRuntime<SenderDb>({ service: 'sender', schema: SCHEMA, config, relayBatchSize: 500 });
const { db, logger, metrics, broker } = runtime;
const now = () => new Date();
const unsubscribeLinks = createUnsubscribeSigner(config.POSTLINE_SECRET_KEY);
// Opens and clicks are written in batches after the pixel or redirect has been answered.
const engagements = createEngagementRecorder({ db, logger });
const senderMetrics = createSenderMetrics(
  metrics.registry,
  () => waitingRecipients(db),
  () => countPauses(db),
);

// Traffic shaping per mailbox provider, its limits from SHAPING_CONFIG (read again on SIGHUP).
const shaper = createShaper({
  config: config.SHAPING_CONFIG ? readShapingFile(config.SHAPING_CONFIG) : DEFAULT_SHAPING,
  scale: config.POSTLINE_DELAY_SCALE,
  onChange: (key, event) => {
    senderMetrics.shapingEvent(key, event);
    // The operators' record of a hold, with the MX domain and the reply whole: the view (every team's)
    // names no other MX domain and shows no address.
    if (event === 'held') logHold(key);
    // GET /deliverability/providers shows a named provider's slowdown or hold as it begins.
    void shapingSnapshots.changed(key, event);
  },
});
function logHold(key: string): void {
  const held = shaper.states().find((s) => s.key === key);
  const fields = { shaping_key: key, reason: held?.reason, held_until: held?.heldUntil?.toISOString() };
  if (key.startsWith('other:')) logger.info(fields, 'mail to another mail server held');
  else logger.warn(fields, 'mail to a mailbox provider held');
}
if (config.SHAPING_CONFIG) reloadShapingOnHangup(config.SHAPING_CONFIG, shaper, logger);
senderMetrics.watchShaping(shaper);
// This process's shaping, written for the install-wide view; its sending IP learnt from its SMTP sessions.
let sendingIp: string | null = null;
const shapingSnapshots = createShapingSnapshots({
  db,
  logger,
  states: () => shaper.states(),
  sendingIp: () => sendingIp,
});
const networkMta = createMta({
  resolver: createMxResolver({
    servers: config.DNS_SERVERS,
    timeoutMs: config.DNS_TIMEOUT_MS,
    allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
  }),
  port: config.MX_DELIVERY_PORT,
  heloName: config.SMTP_HELO_NAME,
  allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
  shaper,
  onLocalAddress: (ip) => void (sendingIp = ip),
  logger,
});
// The development inbox keeps the onboarding sender's messages to team members, and under DEV_INBOX every one.
const mta = createKeepingMta({ db, network: networkMta, all: config.DEV_INBOX, logger });
if (config.DEV_INBOX)
  logger.warn('DEV_INBOX is on: every message is kept in the development inbox, none is sent to its recipients');
senderMetrics.watchDeliveriesInFlight(() => mta.inFlight());

const composer = createComposerPool({ threads: defaultComposerThreads(), logger });
// Messages being composed and sent hold at most this much memory, whatever DELIVERY_CONCURRENCY is.
const MESSAGE_MEMORY_BYTES = 256 * 1024 * 1024;
const box = createSecretBox(config.POSTLINE_SECRET_KEY);
// Seals the open and click tracking links written into sent html (and opens them where they are served).
const trackingCipher = createTrackingCipher(config.POSTLINE_SECRET_KEY);

// Each SMTP transaction is claimed before it starts, so that a copy of its command elsewhere waits for it.
const deliveryClaims = createDeliveryClaims({ db, logger });

// The reputation guard's lines for the install (docs/reputation.md); a team's own, set by the operator, take
// their place.
const thresholds = {
  bounceRate: config.REPUTATION_BOUNCE_RATE,
  complaintRate: config.REPUTATION_COMPLAINT_RATE,
  window: config.REPUTATION_WINDOW,
  minSends: config.REPUTATION_MIN_SENDS,
};

const deliverDeps: DeliverDeps = {
  db,
  mta,
  composer,
  // A domain's DKIM key is opened once per sealed value, not once per message.
  openDkimKey: createOpenedCache((sealed) => box.open(sealed), 1000),
  verpKey: verpKeyOf(config.POSTLINE_SECRET_KEY),
  delayScale: config.POSTLINE_DELAY_SCALE,
  now,
  logger,
  // The reads of attempts arriving within 10 ms share one statement: commands arrive one by one as earlier
  // ones are acked, so without the wait each read would hold only the few that arrived together.
  loadAttempt: createAttemptLoader(db, { maxWaitMs: 10 }),
  budget: createByteBudget(MESSAGE_MEMORY_BYTES),
  // Raw emails are signed as stored, on this thread; composed ones are signed by the composer's threads.
  signRaw: createDkimSigner(),
  observe: senderMetrics.observeAttempt,
  tracking: { cipher: trackingCipher, publicBaseUrl: config.PUBLIC_BASE_URL },
  claims: deliveryClaims,
  onRetaken: () => senderMetrics.retaken.inc(),
  devInbox: config.DEV_INBOX,
};

// Each consumer with what it consumes, its name in logs. DELIVERY_CONCURRENCY=0: no `sender.deliver`
// consumer, this process only accepts.
const consumers: { consumes: string; consumer: Consumer }[] = [
  { consumes: 'internal.domain.state', consumer: createDomainStateConsumer({ broker, db, logger }) },
  ...(config.DELIVERY_CONCURRENCY > 0
    ? [
        {
          consumes: 'sender.deliver',
          consumer: createDeliverEmailConsumer({ ...deliverDeps, broker, concurrency: config.DELIVERY_CONCURRENCY }),
        },
      ]
    : []),
  { consumes: 'sender.send-scheduled', consumer: createSendScheduledConsumer({ broker, db, logger }) },
  { consumes: 'sender.expire-suppression', consumer: createExpireSuppressionConsumer({ broker, db, logger, now }) },
  { consumes: 'internal.email.feedback', consumer: createFeedbackConsumer({ broker, db, logger, now }) },
  {
    consumes: 'internal.contact.unsubscribe-mail',
    consumer: createUnsubscribeMailConsumer({ broker, db, logger, now, unsubscribeLinks }),
  },
  { consumes: 'sender.import-contacts', consumer: createImportContactsConsumer({ broker, db, logger, now }) },
  { consumes: 'sender.send-broadcast', consumer: createBroadcastScheduledSendConsumer({ broker, db, logger }) },
  {
    consumes: 'sender.fan-out-broadcast',
    consumer: createBroadcastFanOutConsumer({
      broker,
      db,
      logger,
      now,
      unsubscribe: unsubscribeLinks,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      devInbox: config.DEV_INBOX,
    }),
  },
];

await runtime.start({
  routes: (app) => {
    // Not API routes: the gateway's pushes of a team's retention (for this service's retention job) and of
    // the reputation guard's lines the operator set for it.
    app.use(teamRetentionRoutes(db));
    app.use(teamThresholdsRoutes(db));
    app.use(
      internalRoutes({
        db,
        now,
        accepted: senderMetrics.accepted,
        singles: createSingleAccepts(db),
        links: createLinkSigner(config.POSTLINE_SECRET_KEY),
        unsubscribeLinks,
        publicBaseUrl: config.PUBLIC_BASE_URL,
        cipher: trackingCipher,
        teamOf: createEmailTeamCache(db),
        recorder: engagements,
        dmarc: createDmarcLookup({ servers: config.DNS_SERVERS, timeoutMs: config.DNS_TIMEOUT_MS }),
        devInbox: config.DEV_INBOX,
        formTokens: createFormTokens(config.POSTLINE_SECRET_KEY),
        logger,
        thresholds,
      }),
    );
  },
  largeBodies: [SEND_EMAIL_BODY],
  // Parts stop in reverse: the consumers first (letting attempts in flight finish and be recorded), then
  // the idempotency pruner, the composer threads and the MTA's idle sessions.
  parts: [
    { name: 'mta', start: () => undefined, stop: () => mta.close() },
    { name: 'composer', start: () => undefined, stop: () => composer.close() },
    // Stops after the consumers: the claims of attempts they settled are released, the others go stale.
    deliveryClaims.part,
    // Stops after the consumers too: its rows go once no delivery is left to change them.
    shapingSnapshots.part,
    createIdempotencyPrune({ db, now, logger }),
    createDevInboxPrune({ db, now, logger, retentionDays: config.DEV_INBOX_RETENTION_DAYS }),
    createMetricFold({ db, logger }),
    createReputationGuard({
      db,
      logger,
      now,
      thresholds,
      onPaused: (reason) => senderMetrics.reputationPauses.inc({ reason }),
    }),
    createRetentionPruner({
      db,
      logger,
      registry: metrics.registry,
      everyMs: retentionPruneEveryMs(config.POSTLINE_DELAY_SCALE),
      retentionOf: () => readTeamRetention(db),
      tables: senderRetainedTables(db),
    }),
    { name: 'engagements', start: () => engagements.start(), stop: () => engagements.stop() },
    ...consumers.map(({ consumes, consumer }) => ({
      name: consumes,
      start: () => consumer.start(),
      stop: () => consumer.stop(),
    })),
  ],
});
