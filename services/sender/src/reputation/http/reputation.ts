// GET /reputation and POST /reputation/resume (Postline's own): the team's rolling rates and pauses, and an
// admin resuming what the reputation guard paused.
import { Router } from 'express';
import { ApiRequests } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf, userOf } from '@postline/platform';
import { sendingPauseOf } from '../db/reputation.ts';
import { pausedMessage } from '../domain/reputation.ts';
import {
  readReputation,
  resumeSending,
  type ReputationDeps,
  type ReputationScopeView,
  type ReputationView,
} from '../use-cases/reputation.ts';

export function reputationRoutes(deps: ReputationDeps): Router {
  const router = Router();
  route(router, '/reputation', {
    get: async (_req, res) => {
      res.json(reputationBody(await readReputation(deps, teamOf(res))));
    },
  });
  route(router, '/reputation/resume', {
    post: async (req, res) => {
      const body = parseInput(ApiRequests.ResumeSendingBody, req.body ?? {});
      res.json(reputationBody(await resumeSending(deps, teamOf(res), body.domain_id, userOf(req))));
    },
  });
  return router;
}

function reputationBody(view: ReputationView) {
  const { thresholds } = view;
  const windowOf = (scope: ReputationScopeView) => ({
    sends: scope.sends,
    bounces: scope.bounces,
    complaints: scope.complaints,
    bounce_rate: scope.bounceRate,
    complaint_rate: scope.complaintRate,
    paused: scope.pause
      ? {
          reason: scope.pause.reason,
          sends: scope.pause.sends,
          bounce_rate: scope.pause.bounceRate,
          complaint_rate: scope.pause.complaintRate,
          paused_at: formatTimestamp(scope.pause.pausedAt),
          message: pausedMessage(sendingPauseOf(scope.pause)),
        }
      : null,
  });
  return {
    object: 'reputation',
    thresholds: {
      bounce_rate: thresholds.bounceRate,
      complaint_rate: thresholds.complaintRate,
      window: thresholds.window,
      min_sends: thresholds.minSends,
      set_for_team: thresholds.setForTeam,
    },
    team: windowOf(view.team),
    domains: view.domains.map((d) => ({ id: d.domainId, name: d.name, ...windowOf(d) })),
  };
}
