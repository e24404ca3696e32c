// The report of a chaos run, made once the system is quiescent: what is not final, not delivered or not
// notified, the queues not empty, the duplicates at the MX and at the webhook receiver with the fault each
// came from, and the emails accepted twice; and the report as an operator reads it.
import type pg from 'pg';
import { SERVICE_NAMES } from '@postline/contracts';
import { waitFor, type SinkMessage, type SinkMx, type System, type WebhookReceiver } from '@postline/testing';
import type { FaultRecord } from './chaos-faults.ts';
import type { ClientRequest, Sent, SlowestAnswer, startStream } from './chaos-load.ts';

/**
 * A client's wait after a fault: from the fault's end with every service ready again (the killed process
 * back) to the final answer of a request it overlapped, with all its retries; `clientMs` is that request's
 * whole wait, from its first try, and `tries` what each try got.
 */
export type Recovery = { ms: number; fault: string; path: string; clientMs: number; tries: string[] };

/** A message or webhook received more than once: how many copies, the gap between the first two, its fault. */
export type Duplicate = { what: string; copies: number; gapMs: number; cause: string };

export type ChaosReport = {
  seconds: number;
  requests: number;
  /** Tries past the first: the client's retries with the same idempotency key. */
  retries: number;
  accepted: number;
  /** Requests given up after two minutes of retries (none expected). */
  abandoned: number;
  /** Answers that were neither accepted nor worth a retry (a client error: none expected). */
  refused: string[];
  /** The try that waited longest for its answer, and the fault it overlapped ('no fault': load alone). */
  slowest: SlowestAnswer & { during: string };
  /** The client request answered last after a fault was over (every service ready), with its retries. */
  slowestRecovery: Recovery;
  /** The same, fault by fault: milliseconds from every service ready to the last answer of a request it overlapped. */
  recoveryByFault: Record<string, number>;
  faults: FaultRecord[];
  unexpectedExits: string[];
  /** Accepted emails with a recipient still pending or deferred after quiescence. */
  notFinal: string[];
  /** Accepted (email, recipient) pairs the MX never got. */
  notDelivered: string[];
  /** Accepted emails' events the endpoint never got. */
  eventsMissing: string[];
  /** Queues holding messages after quiescence, from the services' /metrics. */
  queuesNotEmpty: string[];
  mxDuplicates: Duplicate[];
  /**
   * SMTP transactions at the MX beyond one per email (each email's recipients share one domain, so one
   * transaction): what a retaken attempt may repeat, whatever its number of recipients.
   */
  mxExtraTransactions: number;
  webhookDuplicates: Duplicate[];
  /** Events emitted more than once (two webhook ids for one email's event type). */
  doubleEvents: Duplicate[];
  /** Emails the client sent once (one idempotency key, however many tries) that were accepted more than once. */
  acceptedTwice: string[];
  /** Deliveries (SMTP transactions to the MX) in flight when each `kill sender` struck, by the sender's gauge. */
  inFlightAtSenderKills: number;
  /**
   * Attempts made again after the process holding their claim died mid-attempt (smtp_deliveries_retaken_total,
   * summed over every sender process of the run): the bound on MX duplicates.
   */
  retakenDeliveries: number;
};

/** What the report reads: the services' /metrics, the MX's messages, the webhook receiver's, the database. */
export type ReportSources = { system: System; sink: SinkMx; hooks: WebhookReceiver; direct: pg.Pool };

/**
 * The fault a duplicate came from: the one whose window (its start until every service was ready again)
 * overlaps the span from a second before the first copy to the second copy. None: it happened under load
 * alone.
 */
function causeOf(ats: number[], faults: FaultRecord[]): string {
  return faultDuring((ats[0] as number) - 1_000, ats[1] as number, faults);
}

/** The first fault whose window (its start until every service was ready again) overlaps from..to. */
function faultDuring(from: number, to: number, faults: FaultRecord[]): string {
  const fault = faults.find((f) => from <= f.endedAt + f.readyAfterMs && to >= f.startedAt);
  return fault ? fault.name : 'no fault';
}

/**
 * Each logical request to the fault that struck last before its final answer, if it was sent before that
 * fault was over (every service ready again): how long after that its final answer came, with its retries
 * (0 when it came before). The slowest, and the slowest of each fault.
 */
export function recoveries(
  requests: readonly ClientRequest[],
  faults: readonly FaultRecord[],
): { slowest: Recovery; byFault: Record<string, number> } {
  let slowest: Recovery = { ms: 0, fault: 'none', path: '', clientMs: 0, tries: [] };
  const byFault: Record<string, number> = Object.fromEntries(faults.map((f) => [f.name, 0]));
  for (const request of requests) {
    const fault = faults.findLast((f) => f.startedAt <= request.answeredAt);
    if (!fault) continue;
    const back = fault.endedAt + fault.readyAfterMs;
    if (request.firstTryAt > back) continue;
    const ms = Math.max(0, request.answeredAt - back);
    byFault[fault.name] = Math.max(byFault[fault.name] ?? 0, ms);
    if (ms > slowest.ms)
      slowest = {
        ms,
        fault: fault.name,
        path: request.path,
        clientMs: request.answeredAt - request.firstTryAt,
        tries: request.tries,
      };
  }
  return { slowest, byFault };
}

/**
 * Waits for quiescence (every recipient final, every copy at the MX, every event at the endpoint, every queue
 * empty; 180 s at most), then reports what is left and what came twice.
 */
export async function quiesceAndReport(
  h: ReportSources,
  run: {
    sent: Sent[];
    stats: ReturnType<typeof startStream>['stats'];
    faults: FaultRecord[];
    unexpectedExits: string[];
    seconds: number;
    inFlightAtSenderKills: number;
    log: (line: string) => void;
  },
): Promise<Omit<ChaosReport, 'retakenDeliveries'>> {
  const ids = run.sent.map((s) => s.id as string);
  const notFinalNow = async () => {
    const { rows } = await h.direct.query<{ email_id: string }>(
      `select distinct email_id::text from sender.recipients where email_id = any($1::uuid[]) and status in ('pending', 'deferred')`,
      [ids],
    );
    return rows.map((r) => r.email_id);
  };
  // Quiescence: recipients final, every copy at the MX and every event at the endpoint, queues drained.
  const deliveredPairs = () => {
    const pairs = new Map<string, number[]>();
    for (const message of h.sink.messages) {
      const token = tokenOf(message);
      if (!token) continue;
      for (const rcpt of message.to) {
        const key = `${token} ${rcpt}`;
        pairs.set(key, [...(pairs.get(key) ?? []), message.at]);
      }
    }
    return pairs;
  };
  const expectedEvents = () => {
    const wanted = new Set<string>();
    for (const s of run.sent) {
      wanted.add(`${s.id} email.sent`);
      wanted.add(`${s.id} email.delivered`);
      if (s.scheduled) wanted.add(`${s.id} email.scheduled`);
    }
    return wanted;
  };
  const seenEvents = () => new Set(h.hooks.deliveries.map((d) => `${String(d.json.data.email_id)} ${d.json.type}`));
  const queuesNotEmpty = async () => {
    const full: string[] = [];
    for (const service of SERVICE_NAMES) {
      const text = await (
        await fetch(`${h.system.services[service].url}/metrics`, { signal: AbortSignal.timeout(5_000) })
      ).text();
      for (const line of text.split('\n')) {
        if (!line.startsWith('broker_queue_messages{')) continue;
        if (Number(line.slice(line.lastIndexOf(' ') + 1)) > 0) full.push(`${service}: ${line}`);
      }
    }
    return full;
  };
  const missing = () => {
    const pairs = deliveredPairs();
    const notDelivered = run.sent.flatMap((s) =>
      s.recipients.filter((r) => !pairs.has(`${s.token} ${r}`)).map((r) => `${s.id} ${r}`),
    );
    const seen = seenEvents();
    const eventsMissing = [...expectedEvents()].filter((e) => !seen.has(e));
    return { notDelivered, eventsMissing };
  };
  const quiet = Date.now();
  await waitFor(
    'quiescence',
    async () => {
      const { notDelivered, eventsMissing } = missing();
      return (
        notDelivered.length === 0 &&
        eventsMissing.length === 0 &&
        (await notFinalNow()).length === 0 &&
        (await queuesNotEmpty()).length === 0
      );
    },
    180_000,
  ).catch(() => run.log('no quiescence within 180 s; reporting what is left'));
  run.log(`quiescent ${Date.now() - quiet} ms after the stream stopped`);

  const { notDelivered, eventsMissing } = missing();
  const mxDuplicates: Duplicate[] = [];
  for (const [pair, ats] of deliveredPairs()) {
    if (ats.length > 1)
      mxDuplicates.push({
        what: pair,
        copies: ats.length,
        gapMs: (ats[1] as number) - (ats[0] as number),
        cause: causeOf(ats, run.faults),
      });
  }
  const transactionsOf = new Map<string, number>();
  for (const message of h.sink.messages) {
    const token = tokenOf(message);
    if (token) transactionsOf.set(token, (transactionsOf.get(token) ?? 0) + 1);
  }
  const mxExtraTransactions = [...transactionsOf.values()].reduce((sum, n) => sum + n - 1, 0);
  const byWebhookId = new Map<string, number[]>();
  const byEvent = new Map<string, Set<string>>();
  for (const d of h.hooks.deliveries) {
    const id = d.headers['webhook-id'] ?? '';
    byWebhookId.set(id, [...(byWebhookId.get(id) ?? []), d.at]);
    const event = `${String(d.json.data.email_id)} ${d.json.type}`;
    byEvent.set(event, (byEvent.get(event) ?? new Set()).add(id));
  }
  const webhookDuplicates = [...byWebhookId]
    .filter(([, ats]) => ats.length > 1)
    .map(([id, ats]) => ({
      what: id,
      copies: ats.length,
      gapMs: (ats[1] as number) - (ats[0] as number),
      cause: causeOf(ats, run.faults),
    }));
  const doubleEvents = [...byEvent]
    .filter(([, webhookIds]) => webhookIds.size > 1)
    .map(([event, webhookIds]) => ({ what: event, copies: webhookIds.size, gapMs: 0, cause: 'emitted twice' }));

  // One idempotency key, one email: the sender's rows for the same token (the subject carries it).
  const { rows: twice } = await h.direct.query<{ subject: string }>(
    `select subject from sender.emails where subject like 'chaos %' group by subject having count(*) > 1`,
  );

  const slowest = run.stats.slowest;
  const recovery = recoveries(run.stats.clientRequests, run.faults);
  return {
    acceptedTwice: twice.map((row) => row.subject),
    seconds: Math.round(run.seconds),
    requests: run.stats.requests,
    retries: run.stats.retries,
    accepted: run.stats.accepted,
    abandoned: run.stats.abandoned,
    refused: run.stats.refused,
    slowest: { ...slowest, during: faultDuring(slowest.startedAt, slowest.startedAt + slowest.ms, run.faults) },
    slowestRecovery: recovery.slowest,
    recoveryByFault: recovery.byFault,
    faults: run.faults,
    // A copy: the harness's own stop, after this report, is no exit to report.
    unexpectedExits: [...run.unexpectedExits],
    notFinal: await notFinalNow(),
    notDelivered,
    eventsMissing,
    queuesNotEmpty: await queuesNotEmpty(),
    mxDuplicates,
    mxExtraTransactions,
    webhookDuplicates,
    doubleEvents,
    inFlightAtSenderKills: run.inFlightAtSenderKills,
  };
}

const tokens = new WeakMap<SinkMessage, string | null>();

/**
 * The stream's token a message at the MX carries in its subject (null: not one of the stream's), read once
 * per message: quiescence looks at every message again on each poll.
 */
function tokenOf(message: SinkMessage): string | null {
  let token = tokens.get(message);
  if (token === undefined) {
    token = /^Subject: chaos (\S+)/m.exec(message.raw.toString('latin1'))?.[1] ?? null;
    tokens.set(message, token);
  }
  return token;
}

/** A report as an operator reads it: the figures, then each duplicate's count by cause. */
export function describeReport(report: ChaosReport): string {
  const byCause = (duplicates: Duplicate[]) => {
    const counts = new Map<string, number>();
    for (const d of duplicates) counts.set(d.cause, (counts.get(d.cause) ?? 0) + d.copies - 1);
    return [...counts].map(([cause, n]) => `${n} from ${cause}`).join(', ') || 'none';
  };
  return [
    `${report.seconds} s, ${report.requests} requests (${report.retries} client retries), ${report.accepted} emails accepted, ${report.abandoned} abandoned`,
    `slowest answer ${report.slowest.ms} ms: POST ${report.slowest.path}, ${report.slowest.outcome}, during ${report.slowest.during}`,
    `slowest client answer after a fault (every service ready again): ${report.slowestRecovery.ms} ms after ${report.slowestRecovery.fault}: POST ${report.slowestRecovery.path}, ${report.slowestRecovery.tries.length} tries over ${report.slowestRecovery.clientMs} ms (${report.slowestRecovery.tries.join(' ')})`,
    ...report.faults.map(
      (f) =>
        `  ${f.name}: ${f.endedAt - f.startedAt} ms, every service ready ${f.readyAfterMs} ms after, every client answered ${report.recoveryByFault[f.name] ?? 0} ms after that`,
    ),
    `not final ${report.notFinal.length}, not delivered ${report.notDelivered.length}, events missing ${report.eventsMissing.length}, queues not empty ${report.queuesNotEmpty.length}, unexpected exits ${report.unexpectedExits.length}`,
    `MX duplicates: ${byCause(report.mxDuplicates)}; ${report.mxExtraTransactions} transactions more than one per email (deliveries in flight at the sender's kills: ${report.inFlightAtSenderKills}; attempts retaken from a dead sender: ${report.retakenDeliveries})`,
    `webhook duplicates (same webhook-id): ${byCause(report.webhookDuplicates)}`,
    `events emitted twice: ${report.doubleEvents.length}; emails accepted twice for one key: ${report.acceptedTwice.length}`,
  ].join('\n');
}
