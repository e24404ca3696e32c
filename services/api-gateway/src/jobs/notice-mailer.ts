import type { Kysely } from 'kysely';
import { createIntervalJob, type Logger } from '@postline/platform';
import { claimDueNotices, markNoticeSent } from '../db/notices.ts';
import type { GatewayDb } from '../db/schema.ts';
import type { DashboardMail } from '../owners/dashboard-mail.ts';

/** Notices sent per run. */
const BATCH = 50;
/** How long a claimed notice is left alone before it is tried again (doubled with each try). */
const LEASE_MS = 60_000;

export type NoticeMailer = {
  name: string;
  start: () => void;
  stop: () => void;
  /** Sends what is due now (a new notice), besides the run every 10 s; a run already going is not repeated. */
  kick: () => void;
};

/**
 * Sends the notice emails (notice_emails) through Postline itself, as the operator's team (`mail`), and marks
 * each sent once the sender accepted it. A refused one is tried again later, with longer waits. The send and
 * its mark are not atomic, so each send carries an idempotency key of its notice: a process that dies between
 * them asks again after the lease, and the sender answers the first send instead of sending twice.
 */
export function createNoticeMailer(deps: { db: Kysely<GatewayDb>; mail: DashboardMail; logger: Logger }): NoticeMailer {
  let running: Promise<void> | undefined;
  async function run(): Promise<void> {
    for (;;) {
      const due = await claimDueNotices(deps.db, BATCH, LEASE_MS);
      for (const notice of due) {
        const sent = await deps.mail({
          to: notice.to_address,
          subject: notice.subject,
          text: notice.text,
          idempotencyKey: `notice:${notice.message_id}:${notice.user_id}`,
        });
        if (sent) await markNoticeSent(deps.db, notice);
        else deps.logger.warn({ user_id: notice.user_id, attempts: notice.attempts }, 'notice email not sent yet');
      }
      if (due.length < BATCH) return;
    }
  }
  const once = () => (running ??= run().finally(() => (running = undefined)));
  const job = createIntervalJob({ name: 'notice-mailer', everyMs: 10_000, run: once, logger: deps.logger });
  return {
    name: job.name,
    start: job.start,
    stop: job.stop,
    kick: () => void once().catch((err: unknown) => deps.logger.warn({ err }, 'notice-mailer run failed')),
  };
}
