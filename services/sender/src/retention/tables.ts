// What of the sender's tables ages out with the team's retention (docs/retention.md lists every table and
// its rule). An email goes with every row about it. The counts the metrics read (email_metrics) are kept
// apart from the rows they were counted from, so they stay; a broadcast's results, counted from its
// emails' rows, are kept on the broadcast before the first of those rows goes.
import { sql, type Kysely } from 'kysely';
import type { RetainedTable } from '@postline/platform';
import { broadcastResults } from '../broadcasts/db/broadcast-recipients.ts';
import type { SenderDb } from '../db/schema.ts';
import { listClickedLinks } from '../engagement/db/engagements.ts';

export function senderRetainedTables(db: Kysely<SenderDb>): readonly RetainedTable[] {
  return [
    {
      table: 'emails',
      time: 'created_at',
      // A scheduled email is kept until its send time has passed the cutoff too.
      where: (cutoff) => sql`scheduled_at is null or scheduled_at < ${cutoff}`,
      prepare: (teamId, cutoff) => keepBroadcastResults(db, teamId, cutoff),
      children: [
        { table: 'recipients', column: 'email_id' },
        { table: 'email_attachments', column: 'email_id' },
        { table: 'raw_emails', column: 'email_id' },
        { table: 'delivery_attempts', column: 'email_id' },
        { table: 'delivery_claims', column: 'email_id' },
        { table: 'email_events', column: 'email_id' },
        { table: 'email_engagements', column: 'email_id' },
        { table: 'email_first_engagements', column: 'email_id' },
        { table: 'broadcast_recipients', column: 'email_id' },
      ],
    },
    // A finished import (its file already let go) with its failed rows; one still running is kept.
    {
      table: 'contact_imports',
      time: 'completed_at',
      children: [{ table: 'contact_import_failures', column: 'import_id' }],
    },
  ];
}

/**
 * Writes final_results on each of the team's broadcasts that has an email older than `cutoff` (about to go)
 * and none yet, and lets go of its recipients that were sent nothing (suppressed: no email row to age out
 * with). Each broadcast in a transaction of its own that locks it, as every change of a broadcast does.
 */
export async function keepBroadcastResults(db: Kysely<SenderDb>, teamId: string, cutoff: Date): Promise<number> {
  const { rows } = await sql<{ id: string }>`select b.id from broadcasts b
    where b.team_id = ${teamId}::uuid and b.final_results is null
      and exists (select 1 from emails e
        where e.team_id = b.team_id and e.broadcast_id = b.id and e.created_at < ${cutoff})`.execute(db);
  for (const { id } of rows) {
    await db.transaction().execute(async (trx) => {
      const broadcast = await trx
        .selectFrom('broadcasts')
        .select(['id', 'topic_id', 'final_results'])
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!broadcast || broadcast.final_results) return;
      const counts = await broadcastResults(trx, { id, topicId: broadcast.topic_id });
      const links = await listClickedLinks(trx, teamId, id);
      await trx
        .updateTable('broadcasts')
        .set({ final_results: JSON.stringify({ counts, links }) })
        .where('id', '=', id)
        .execute();
      await trx
        .deleteFrom('broadcast_recipients')
        .where('broadcast_id', '=', id)
        .where('email_id', 'is', null)
        .execute();
    });
  }
  return rows.length;
}
