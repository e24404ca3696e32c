import { Router } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { ApiError, formatTimestamp, isUuid, notFound, parseInput, route } from '@postline/platform';
import { findRequestLog, listRequestLogs, type RequestLogItem } from '../db/request-logs.ts';
import type { GatewayDb } from '../db/schema.ts';
import { authOf } from './context.ts';

function toItem(log: RequestLogItem) {
  return {
    id: log.id,
    created_at: formatTimestamp(log.created_at),
    endpoint: log.endpoint,
    method: log.method,
    response_status: log.response_status,
    user_agent: log.user_agent,
    // Who made it: an API key (its name null once the key is gone), or a signed-in user.
    api_key: log.api_key_id ? { id: log.api_key_id, name: log.api_key_name } : null,
    user: log.user_id ? { id: log.user_id, email: log.user_email } : null,
  };
}

export function logRoutes(deps: { db: Kysely<GatewayDb> }): Router {
  const router = Router();
  route(router, '/logs', {
    get: async (req, res) => {
      const { teamId } = authOf(res);
      const { limit, after, before, ...filters } = req.query;
      const filter = parseInput(ApiRequests.LogFilterQuery, filters);
      const page = await listRequestLogs(
        deps.db,
        teamId,
        filter,
        parseInput(PaginationQuery, { limit, after, before }),
      );
      res.json({ ...page, data: page.data.map(toItem) });
    },
  });
  route(router, '/logs/:id', {
    get: async (req, res) => {
      const { teamId } = authOf(res);
      const id = req.params.id ?? '';
      if (!isUuid(id)) throw new ApiError(422, 'validation_error', 'The `logId` must be a valid UUID.');
      const log = await findRequestLog(deps.db, teamId, id);
      if (!log) throw notFound('Log not found');
      res.json({
        object: 'log',
        ...toItem(log),
        request_body: log.request_body ?? null,
        response_body: log.response_body ?? null,
      });
    },
  });
  return router;
}
