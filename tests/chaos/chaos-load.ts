// The load of a chaos run: a stream of sends at a steady rate (singles, batches of up to 100, scheduled
// sends), each retried with its idempotency key until answered, as a well-behaved client does.
import { randomUUID } from 'node:crypto';
import { sleep, type System } from '@postline/testing';

/** The domain the stream's recipients are at: the local MX's. */
export const RCPT = 'chaos-rcpt.test';
/** The client's give-up: past it a request counts as abandoned. */
const CLIENT_PATIENCE_MS = 120_000;

/** The slowest answer of a run: when its try started and ended, to what, and how it ended. */
export type SlowestAnswer = { ms: number; startedAt: number; path: string; outcome: string };

/**
 * A logical request of the client (one idempotency key): when its first try started, when its final answer
 * came (the accept, a refusal, or the client's give-up), and what each try got (a status, or the failure of
 * a try that got none), the last one how it ended.
 */
export type ClientRequest = { path: string; firstTryAt: number; answeredAt: number; tries: string[] };

/** An email of the stream: the token its subject carries, its recipients, and its id once accepted. */
export type Sent = { token: string; recipients: string[]; scheduled: boolean; id?: string };

/** Where the stream sends: the gateway, with one team's API key, from its verified domain. */
export type StreamTarget = { system: System; apiKey: string; from: string };

/**
 * The client side: a stream of requests at `rate` emails per second until `stopped()`, each retried with
 * its idempotency key on a 429, a 5xx or no answer within `answerTimeoutMs`, as a well-behaved client does.
 */
export function startStream(h: StreamTarget, rate: number, answerTimeoutMs: number, log: (line: string) => void) {
  const sent = new Map<string, Sent>();
  const stats = {
    requests: 0,
    retries: 0,
    accepted: 0,
    abandoned: 0,
    refused: [] as string[],
    slowest: { ms: 0, startedAt: 0, path: '', outcome: '' } as SlowestAnswer,
    /** Every logical request, answered or given up: what the recovery after each fault is read from. */
    clientRequests: [] as ClientRequest[],
  };
  let stopped = false;
  // The run failed: requests in flight give up at their next retry instead of waiting out their patience.
  let abandoned = false;
  const inFlight = new Set<Promise<void>>();

  const email = (scheduled: boolean) => {
    const token = randomUUID();
    const recipients = Array.from(
      { length: Math.random() < 0.2 ? 2 : 1 },
      (_, i) => `r${i}-${token.slice(0, 8)}@${RCPT}`,
    );
    const item: Sent = { token, recipients, scheduled };
    sent.set(token, item);
    const body: Record<string, unknown> = {
      from: h.from,
      to: recipients,
      subject: `chaos ${token}`,
      text: `chaos ${token}`,
    };
    if (scheduled) body.scheduled_at = new Date(Date.now() + 3_000 + Math.random() * 5_000).toISOString();
    return { item, body };
  };

  async function submit(path: '/emails' | '/emails/batch', items: Sent[], body: unknown): Promise<void> {
    const key = randomUUID();
    const firstTry = Date.now();
    stats.requests++;
    const tries: string[] = [];
    const answered = () => stats.clientRequests.push({ path, firstTryAt: firstTry, answeredAt: Date.now(), tries });
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) stats.retries++;
      const started = Date.now();
      let status = 0;
      let answer: unknown;
      let failure = '';
      try {
        const r = await fetch(`${h.system.apiUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(answerTimeoutMs),
        });
        status = r.status;
        answer = await r.json().catch(() => undefined);
      } catch (err) {
        // no answer: a refused connection (a process restarting) or the timeout
        const cause = (err as { cause?: { code?: string } }).cause?.code;
        failure = cause ?? (err as Error).name;
      }
      const took = Date.now() - started;
      tries.push(failure || `${status}`);
      if (took > stats.slowest.ms)
        stats.slowest = {
          ms: took,
          startedAt: started,
          path,
          outcome: failure ? `no answer (${failure})` : `${status}`,
        };
      if (status === 200) {
        const ids =
          path === '/emails'
            ? [(answer as { id: string }).id]
            : (answer as { data: { id: string }[] }).data.map((d) => d.id);
        items.forEach((item, i) => (item.id = ids[i]));
        stats.accepted += items.length;
        answered();
        return;
      }
      // 409: the same key's first request is still in flight; 429 and 5xx: try again later.
      if (status !== 0 && status !== 409 && status !== 429 && status < 500) {
        stats.refused.push(`${path} answered ${status}: ${JSON.stringify(answer)}`);
        for (const item of items) sent.delete(item.token);
        answered();
        return;
      }
      if (abandoned || Date.now() - firstTry > CLIENT_PATIENCE_MS) {
        stats.abandoned++;
        for (const item of items) sent.delete(item.token);
        log(`abandoned a request to ${path} after ${attempt + 1} tries (last status ${status})`);
        tries.push('abandoned');
        answered();
        return;
      }
      await sleep(Math.min(250 * 2 ** attempt, 2_000));
    }
  }

  const loop = (async () => {
    let budget = 0;
    let last = Date.now();
    while (!stopped) {
      const now = Date.now();
      budget += ((now - last) / 1000) * rate;
      last = now;
      while (budget >= 1) {
        const roll = Math.random();
        let job: Promise<void>;
        if (roll < 0.05) {
          // A batch of 2 to 100 (one in ten is a full 100).
          const size = Math.random() < 0.1 ? 100 : 2 + Math.floor(Math.random() * 19);
          const emails = Array.from({ length: size }, () => email(false));
          job = submit(
            '/emails/batch',
            emails.map((e) => e.item),
            emails.map((e) => e.body),
          );
          budget -= size;
        } else {
          const one = email(roll < 0.15);
          job = submit('/emails', [one.item], one.body);
          budget -= 1;
        }
        inFlight.add(job);
        void job.finally(() => inFlight.delete(job));
      }
      await sleep(20);
    }
  })();

  return {
    sent,
    stats,
    async stop(abandon = false) {
      stopped = true;
      abandoned = abandon;
      await loop;
      await Promise.all([...inFlight]);
    },
  };
}
