// GET /deliverability/providers (Postline's own): why mail to a mailbox provider is slowed or held, and
// until when. Install-wide: any team may read it, none may change it; so it names no team's recipients
// (domain/provider-shaping.ts).
import { Router } from 'express';
import type { Kysely } from 'kysely';
import { route } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import type { ShapingRow, ShapingView } from '../domain/provider-shaping.ts';
import { readProviderShaping } from '../use-cases/read-providers.ts';

export type DeliverabilityDeps = { db: Kysely<SenderDb> };

export function deliverabilityRoutes(deps: DeliverabilityDeps): Router {
  const router = Router();
  route(router, '/deliverability/providers', {
    get: async (_req, res) => {
      res.json(providersBody(await readProviderShaping(deps.db)));
    },
  });
  return router;
}

/** A process told apart by the start of its random id: enough among a few processes, short to show. */
const SHORT_PROCESS_ID = 8;

const figuresOf = (s: Omit<ShapingRow, 'key' | 'provider' | 'maxMessagesPerConnection' | 'servers'>) => ({
  state: s.state,
  reason: s.reason,
  held_until: s.heldUntil?.toISOString() ?? null,
  rate_per_minute: s.ratePerMinute,
  limit_per_minute: s.limitPerMinute,
  connections: s.connections,
  max_connections: s.maxConnections,
  deferrals_in_a_row: s.deferrals,
});

function providersBody({ providers, otherServers }: ShapingView) {
  return {
    object: 'provider_shaping',
    providers: providers.map((p) => ({
      provider: p.provider,
      ...figuresOf(p),
      limits: {
        messages_per_minute: p.limits.messagesPerMinute,
        max_connections: p.limits.maxConnections,
        max_messages_per_connection: p.limits.maxMessagesPerConnection,
      },
      replicas: p.replicas.map((r) => ({
        process_id: r.processId.replaceAll('-', '').slice(0, SHORT_PROCESS_ID),
        replica: r.replica,
        sending_ip: r.sendingIp,
        ...figuresOf(r),
        updated_at: r.updatedAt.toISOString(),
      })),
      updated_at: p.updatedAt.toISOString(),
    })),
    other_mail_servers: {
      slowed: otherServers.slowed,
      held: otherServers.held,
      held_until_earliest: otherServers.firstHeldUntil?.toISOString() ?? null,
      held_until_latest: otherServers.lastHeldUntil?.toISOString() ?? null,
      reason: otherServers.reason,
    },
  };
}
