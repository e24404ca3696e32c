import { Router } from 'express';
import type { Kysely } from 'kysely';
import { TeamRetentionUpdate } from '@postline/contracts';
import { route } from '../http/app.ts';
import { requireTeam, teamOf } from '../http/internal.ts';
import { parseInput } from '../http/validate.ts';
import { saveTeamRetention } from './tables.ts';

/** The internal path where the gateway pushes a team's retention to each owner of rows that age out. */
export const TEAM_RETENTION_PATH = '/internal/team-retention';

/**
 * PUT TEAM_RETENTION_PATH, the team in the gateway's header: stores the team's retention in this
 * service's `team_retention` (createTeamRetentionTable) and answers 204. Idempotent: a repeated or older push
 * changes nothing.
 */
export function teamRetentionRoutes<DB>(db: Kysely<DB>): Router {
  const router = Router();
  router.use(TEAM_RETENTION_PATH, requireTeam());
  route(router, TEAM_RETENTION_PATH, {
    put: async (req, res) => {
      const body = parseInput(TeamRetentionUpdate, req.body);
      await saveTeamRetention(db, teamOf(res), { days: body.days, changedAt: new Date(body.changed_at) });
      res.status(204).end();
    },
  });
  return router;
}
