import { Router } from 'express';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { ApiError, formatTimestamp, isUuid, notFound, parseInput, route } from '@postline/platform';
import { listApiKeys, renameApiKey, revokeApiKey } from '../db/api-keys.ts';
import { createApiKey, type CreateApiKeyDeps } from '../use-cases/api-keys.ts';
import { authOf } from './context.ts';

const { CreateApiKeyBody, UpdateApiKeyBody } = ApiRequests;

export type ApiKeyDeps = CreateApiKeyDeps & {
  /** Called after a key changed here, before answering (the other gateways hear of it by NOTIFY). */
  onKeysChanged: () => void;
};

export function apiKeyRoutes(deps: ApiKeyDeps): Router {
  const router = Router();
  route(router, '/api-keys', {
    post: async (req, res) => {
      const { teamId } = authOf(res);
      const body = parseInput(CreateApiKeyBody, req.body);
      const permission = body.permission ?? 'full_access';
      if (permission !== 'full_access' && permission !== 'sending_access') {
        throw new ApiError(422, 'invalid_access', 'Access must be "full_access" | "sending_access"');
      }
      const { key, token } = await createApiKey(deps, teamId, {
        name: body.name,
        permission,
        domainId: body.domain_id ?? null,
        expiresAt: body.expires_at ? new Date(body.expires_at) : null,
      });
      res.status(201).json({ id: key.id, token });
    },
    get: async (req, res) => {
      const { teamId } = authOf(res);
      const page = await listApiKeys(deps.db, teamId, parseInput(PaginationQuery, req.query));
      res.json({
        ...page,
        data: page.data.map((key) => ({
          id: key.id,
          name: key.name,
          created_at: formatTimestamp(key.created_at),
          last_used_at: key.last_used_at ? formatTimestamp(key.last_used_at) : null,
          permission: key.permission,
          domain_id: key.domain_id,
          expires_at: key.expires_at ? formatTimestamp(key.expires_at) : null,
        })),
      });
    },
  });
  route(router, '/api-keys/:id', {
    patch: async (req, res) => {
      const { teamId } = authOf(res);
      const id = keyId(req.params.id);
      const body = parseInput(UpdateApiKeyBody, req.body);
      if (!(await renameApiKey(deps.db, teamId, id, body.name))) throw notFound('API key not found');
      res.json({ object: 'api_key', id });
    },
    delete: async (req, res) => {
      const { teamId } = authOf(res);
      const id = keyId(req.params.id);
      if (!(await revokeApiKey(deps.db, teamId, id))) throw notFound('API key not found');
      deps.onKeysChanged();
      res.json({ object: 'api_key', id, deleted: true });
    },
  });
  return router;
}

// Another team's key, a revoked key and a malformed id all look the same: not found.
function keyId(id: string | undefined): string {
  if (!id || !isUuid(id)) throw notFound('API key not found');
  return id;
}
