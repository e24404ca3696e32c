// POST /emails without an idempotency key: single emails accepted in groups, one statement per group.
import type { Kysely } from 'kysely';
import { ApiError, createBatcher } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { acceptEmails, type Accepted, type SingleAccept, type SingleAccepts } from './accept-emails.ts';
import { checkSender, lookUpSends, SenderRefused, topicOf } from './sender-checks.ts';

/**
 * Accepts single emails (POST /emails without an idempotency key) in groups: requests that arrive while
 * earlier groups are being written share one domain lookup (and one topic read, if any names a topic) and one
 * accept statement, so one commit. A lone request goes at once; under load groups grow by themselves (at
 * most `maxConcurrent` statements run, what arrives meanwhile waits for the next). Each request gets its own
 * answer: its id, or the 403 of its own sender check or the 404 of its own topic. If a group's statement fails, its emails are retried one by one, so an error lands only
 * on the request that caused it.
 */
export function createSingleAccepts(
  db: Kysely<SenderDb>,
  opts: { maxItems?: number; maxConcurrent?: number } = {},
): SingleAccepts {
  type Job = SingleAccept & { resolve: (id: string) => void; reject: (err: unknown) => void };
  const envelopeSend = (job: Job) => ({
    teamId: job.teamId,
    request: { ...job.request, fromDomain: job.envelopeFromDomain as string },
  });
  const acceptGroup = async (jobs: Job[]) => {
    const { domains, topics } = await lookUpSends(db, [
      ...jobs,
      ...jobs.filter((job) => job.envelopeFromDomain).map(envelopeSend),
    ]);
    const allowed: { job: Job; accepted: Accepted }[] = [];
    for (const job of jobs) {
      const sender = checkSender(domains(job.teamId, job.request.fromDomain), job.request, job.grant);
      const envelopeSender = job.envelopeFromDomain
        ? checkSender(domains(job.teamId, job.envelopeFromDomain), envelopeSend(job).request, job.grant)
        : undefined;
      const topic = topicOf(topics, job.teamId, job.request);
      if (!sender.ok) job.reject(new SenderRefused(sender));
      else if (envelopeSender && !envelopeSender.ok) job.reject(new SenderRefused(envelopeSender));
      else if (topic instanceof ApiError) job.reject(topic);
      else
        allowed.push({
          job,
          accepted: {
            request: job.request,
            domain: sender.domain,
            topic,
            origin: job.origin,
            ...(job.raw ? { raw: job.raw } : {}),
          },
        });
    }
    if (allowed.length === 0) return;
    // Emails of several teams in one statement: each row's team is its sending domain's.
    const ids = await acceptEmails(
      db,
      { idempotency: undefined, emails: allowed.map((entry) => entry.accepted), now: allowed[0]!.job.now },
      (emailIds) => emailIds,
    );
    allowed.forEach((entry, i) => entry.job.resolve(ids[i] as string));
  };
  const batcher = createBatcher<Job>({
    maxItems: opts.maxItems ?? 64,
    maxWaitMs: 0,
    maxConcurrent: opts.maxConcurrent ?? 4,
    flush: async (jobs) => {
      try {
        await acceptGroup(jobs);
      } catch (err) {
        if (jobs.length === 1) return jobs[0]!.reject(err);
        for (const job of jobs) await acceptGroup([job]).catch(job.reject);
      }
    },
  });
  return {
    accept: (input: SingleAccept) =>
      new Promise<string>((resolve, reject) => batcher.add({ ...input, resolve, reject })),
  };
}
