// PUT /internal/team-reputation (not an API route): the gateway's push of the reputation guard's lines the
// operator set for a team, the team in the gateway's header. Idempotent: a repeated or older push changes
// nothing (changed_at orders them).
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { TEAM_REPUTATION_PATH, TeamReputationUpdate } from '@postline/contracts';
import { parseInput, requireTeam, route, teamOf } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { saveTeamThresholds } from '../db/reputation.ts';

export function teamThresholdsRoutes(db: Kysely<SenderDb>): Router {
  const router = Router();
  router.use(TEAM_REPUTATION_PATH, requireTeam());
  route(router, TEAM_REPUTATION_PATH, {
    put: async (req, res) => {
      const { thresholds, changed_at } = parseInput(TeamReputationUpdate, req.body);
      await saveTeamThresholds(
        db,
        teamOf(res),
        {
          bounceRate: thresholds.bounce_rate,
          complaintRate: thresholds.complaint_rate,
          window: thresholds.window,
          minSends: thresholds.min_sends,
        },
        new Date(changed_at),
      );
      res.status(204).end();
    },
  });
  return router;
}
