import { sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { GatewayDb, NoticeEmailsTable } from './schema.ts';

type Db = Kysely<GatewayDb> | Transaction<GatewayDb>;

export type NoticeEmail = Selectable<NoticeEmailsTable>;

/** A notice the sender kept refusing is given up after this many tries (about a day with the leases below). */
const MAX_ATTEMPTS = 24;

/** The admins of a team (address and name) and the team's name; undefined for a team that is gone. */
export async function teamAdmins(
  db: Db,
  teamId: string,
): Promise<{ team: string; admins: { id: string; email: string; name: string }[] } | undefined> {
  const team = await db.selectFrom('teams').select('name').where('id', '=', teamId).executeTakeFirst();
  if (!team) return undefined;
  const admins = await db
    .selectFrom('team_members')
    .innerJoin('users', 'users.id', 'team_members.user_id')
    .select(['users.id', 'users.email', 'users.name'])
    .where('team_members.team_id', '=', teamId)
    .where('team_members.role', '=', 'admin')
    .orderBy('users.id')
    .execute();
  return { team: team.name, admins };
}

/** Adds the notices not added before (by message and person); a redelivered message adds nothing. */
export async function insertNotices(db: Db, rows: Insertable<NoticeEmailsTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('notice_emails')
    .values(rows)
    .onConflict((oc) => oc.columns(['message_id', 'user_id']).doNothing())
    .execute();
}

/**
 * Up to `limit` unsent notices that are due, each counted as attempted and moved into the future (`leaseMs`,
 * doubled with each try up to 64 times), so that another replica, or the next run if this one dies mid-send,
 * leaves them alone meanwhile and a refused one waits longer each time.
 */
export async function claimDueNotices(db: Db, limit: number, leaseMs: number): Promise<NoticeEmail[]> {
  const { rows } = await sql<NoticeEmail>`with due as (
      select message_id, user_id from notice_emails
      where sent_at is null and next_attempt_at <= now() and attempts < ${MAX_ATTEMPTS}
      order by next_attempt_at limit ${limit} for update skip locked)
    update notice_emails n set attempts = n.attempts + 1,
      next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000} * power(2, least(n.attempts, 6)))
    from due where n.message_id = due.message_id and n.user_id = due.user_id
    returning n.*`.execute(db);
  return rows;
}

export async function markNoticeSent(db: Db, notice: Pick<NoticeEmail, 'message_id' | 'user_id'>): Promise<void> {
  await db
    .updateTable('notice_emails')
    .set({ sent_at: new Date() })
    .where('message_id', '=', notice.message_id)
    .where('user_id', '=', notice.user_id)
    .execute();
}
