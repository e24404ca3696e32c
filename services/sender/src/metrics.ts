import { Counter, Gauge, Histogram, type Metrics } from '@postline/platform';
import type { Waiting, RecipientResult, Shaper, ShapingEvent } from './delivery/index.ts';

export type SenderMetrics = {
  /** Emails accepted, by request kind (single, batch). */
  accepted: Counter<'kind'>;
  /** One delivery attempt that went to SMTP: its recipients' results and its duration (DeliverDeps.observe). */
  observeAttempt: (results: readonly RecipientResult[], seconds: number) => void;
  /** An attempt made again after the process holding its claim died: its message may have gone out twice. */
  retaken: Counter;
  /** Reports the deliveries under way on every scrape (the MTA's count). */
  watchDeliveriesInFlight: (count: () => number) => void;
  /** Pauses the reputation guard made in this process, by reason (bounce_rate, complaint_rate). */
  reputationPauses: Counter<'reason'>;
  /** Counts what the traffic shaping did (createShaper's onChange). */
  shapingEvent: (key: string, event: ShapingEvent) => void;
  /** Reports each provider's shaping state on every scrape. */
  watchShaping: (shaper: Shaper) => void;
};

/** The metric label of a shaping key: the provider, with every other MX domain as `other`. */
const providerLabel = (key: string) => (key.startsWith('other:') ? 'other' : key);

/**
 * The sender's own metrics on the service registry. The recipients waiting, and the age of the oldest, are
 * read from the database at scrape time (`waitingRecipients`), so every replica reports the same, global
 * figures (aggregate with max, not sum), as are the paused teams and domains; the counters and the histogram
 * are per replica (sum them).
 */
export function createSenderMetrics(
  registry: Metrics['registry'],
  waitingRecipients: () => Promise<Waiting[]>,
  pausedNow: () => Promise<{ teams: number; domains: number }>,
): SenderMetrics {
  const registers = [registry];
  const accepted = new Counter({
    name: 'emails_accepted_total',
    help: 'Emails accepted, by request kind',
    labelNames: ['kind'] as const,
    registers,
  });
  const results = new Counter({
    name: 'email_recipient_outcomes_total',
    help: 'Recipient outcomes of delivery attempts',
    labelNames: ['outcome'] as const,
    registers,
  });
  const attemptDuration = new Histogram({
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
      const rows = await waitingRecipients();
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
  let deliveriesInFlight = () => 0;
  new Gauge({
    name: 'smtp_deliveries_in_flight',
    help: 'Delivery attempts (SMTP transactions) under way in this process: what a crash now could deliver twice',
    registers,
    collect() {
      this.set(deliveriesInFlight());
    },
  });
  const retaken = new Counter({
    name: 'smtp_deliveries_retaken_total',
    help: 'Delivery attempts made again after the process holding their claim died or gave the attempt up unrecorded (the recipient may get the message twice)',
    registers,
  });
  new Gauge({
    name: 'reputation_paused',
    help: 'Teams and sending domains the reputation guard has paused now, by scope (global: aggregate with max)',
    labelNames: ['scope'] as const,
    registers,
    async collect() {
      const paused = await pausedNow();
      this.set({ scope: 'team' }, paused.teams);
      this.set({ scope: 'domain' }, paused.domains);
    },
  });
  const reputationPauses = new Counter({
    name: 'reputation_pauses_total',
    help: 'Pauses the reputation guard made, by the rate that crossed its line',
    labelNames: ['reason'] as const,
    registers,
  });
  const shapingEvents = new Counter({
    name: 'smtp_provider_shaping_events_total',
    help: 'Traffic shaping per mailbox provider: pushbacks (421, 4.7.x, refused connections), other deferrals by the provider, holds, and deliveries deferred by a hold or the rate',
    labelNames: ['provider', 'event'] as const,
    registers,
  });
  let shaper: Shaper | undefined;
  // Named providers always; another MX domain while it is slowed or held (few at a time), under mx_domain.
  const shapingGauge = (name: string, help: string, value: (s: ReturnType<Shaper['states']>[number]) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['provider', 'mx_domain'] as const,
      registers,
      collect() {
        this.reset();
        for (const state of shaper?.states() ?? []) {
          const other = state.key.startsWith('other:');
          if (other && state.rate >= state.limit && !state.heldUntil) continue;
          this.set({ provider: state.provider, mx_domain: other ? state.key.slice(6) : '' }, value(state));
        }
      },
    });
  shapingGauge(
    'smtp_provider_rate_per_minute',
    'Messages a minute allowed now to the provider (lowered after a pushback)',
    (s) => s.rate,
  );
  shapingGauge('smtp_provider_rate_limit_per_minute', "The provider's configured messages a minute", (s) => s.limit);
  shapingGauge('smtp_provider_held', '1 while deliveries to the provider are held after it pushed back', (s) =>
    s.heldUntil ? 1 : 0,
  );
  shapingGauge(
    'smtp_provider_hold_release_timestamp_seconds',
    'When the hold on the provider is expected to end (0: none)',
    (s) => (s.heldUntil ? s.heldUntil.getTime() / 1000 : 0),
  );
  return {
    accepted,
    retaken,
    reputationPauses,
    shapingEvent: (key, event) => shapingEvents.inc({ provider: providerLabel(key), event }),
    watchShaping: (watched) => void (shaper = watched),
    watchDeliveriesInFlight: (count) => void (deliveriesInFlight = count),
    observeAttempt: (attemptResults, seconds) => {
      attemptDuration.observe(seconds);
      for (const result of attemptResults) results.inc({ outcome: result.kind });
    },
  };
}
