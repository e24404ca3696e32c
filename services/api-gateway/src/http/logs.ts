import { Router } from 'express';
import type { Kysely } from 'kysely';
import { PaginationQuery } from '@postline/contracts';
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
  };
}

export function logRoutes(deps: { db: Kysely<GatewayDb> }): Router {
  const router = Router();
  route(router, '/logs', {
    get: async (req, res) => {
      const { teamId } = authOf(res);
      const page = await listRequestLogs(deps.db, teamId, parseInput(PaginationQuery, req.query));
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
