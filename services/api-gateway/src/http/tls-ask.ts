import { Router } from 'express';
import { normalizeHostName } from '@postline/contracts';
import { notFound, route, validationError } from '@postline/platform';
import type { WindowCount } from '../redis/window-counter.ts';
import { rateLimited } from './rate-limit.ts';

/** Where the TLS proxy in front (Caddy's `on_demand_tls { ask … }`) asks whether a host may get a certificate. */
export const TLS_ASK_PATH = '/internal/tls-ask';

export type TlsAskDeps = {
  /** Whether a normalized host is a verified tracking host (asked of the sender). */
  isTrackingHost: (host: string) => Promise<boolean>;
  /** PUBLIC_BASE_URL: its host is allowed too when it is an https URL (the dashboard and API behind the proxy). */
  publicBaseUrl: string;
  countRequest: (key: string) => Promise<WindowCount | undefined>;
  redisPrefix: string;
  /** Asks per second, all hosts together (PUBLIC_LINK_RATE_LIMIT_PER_SECOND, as for one public link). */
  perSecond: number;
};

/**
 * `GET /internal/tls-ask?domain=<host>`, key-less: 200 only for a host that may get a certificate on demand
 * (the tracking host of a domain whose tracking records are verified, or PUBLIC_BASE_URL's host when it is
 * https), 404 for any other host, 422 for a value that is not a host name, 429 past the limit, 503 when the
 * sender cannot answer. Caddy takes anything but a 2xx as a refusal, so every doubt refuses. The asks of all
 * hosts share one window: an unknown SNI name is cheap to make up, and each ask reads Postgres.
 */
export function tlsAskRoutes(deps: TlsAskDeps): Router {
  const router = Router();
  route(router, TLS_ASK_PATH, {
    get: async (req, res) => {
      const asked = req.query.domain;
      const host = typeof asked === 'string' ? normalizeHostName(asked) : undefined;
      if (host === undefined) {
        throw validationError('The `domain` query parameter must be one host name, such as links.example.com.');
      }
      const counted = await deps.countRequest(`${deps.redisPrefix}:ratelimit:tls-ask`);
      if (counted && counted.count > deps.perSecond) {
        throw rateLimited(counted, `Too many certificate asks. ${deps.perSecond} are answered per second.`);
      }
      if (host !== publicHttpsHost(deps.publicBaseUrl) && !(await deps.isTrackingHost(host))) {
        throw notFound('No certificate is issued for this host: it is not a verified tracking host.');
      }
      res.status(200).json({ domain: host });
    },
  });
  return router;
}

/** PUBLIC_BASE_URL's host when the URL is https, else undefined (Caddy then needs no certificate for it). */
function publicHttpsHost(publicBaseUrl: string): string | undefined {
  const base = URL.parse(publicBaseUrl);
  return base?.protocol === 'https:' ? normalizeHostName(base.hostname) : undefined;
}
