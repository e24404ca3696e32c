// Type-level tests, checked by `tsc -p tsconfig.json` and never run: the sender's database type lists only
// the sender's tables, so another service's table (the gateway's `teams`) cannot even be typed there. The
// line before each `@ts-expect-error` must compile, so the test cannot pass because the query is broken
// in some other way.
import type { createDb } from '@postline/platform';
import type { SenderDb } from '../../services/sender/src/db/schema.ts';

declare const db: ReturnType<typeof createDb<SenderDb>>['db'];

export function onlyTheSendersTables(teamId: string) {
  const emails = db.selectFrom('emails').select('id').where('team_id', '=', teamId);
  // @ts-expect-error: `teams` is the api-gateway's table, not in SenderDb
  const teams = db.selectFrom('teams').selectAll();
  return [emails, teams];
}
