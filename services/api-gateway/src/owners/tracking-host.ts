import { TRACKING_HOSTS_PATH } from '@postline/contracts';
import { ApiError } from '@postline/platform';
import type { Owners } from '../domain/routes.ts';

/**
 * Asks the sender whether a (normalized) host is a verified tracking host (GET /tracking-hosts/{host}): 200
 * is yes, 404 no; anything else, or no answer within 5 s (a TLS handshake waits on it), is a 503.
 */
export function createTrackingHostCheck(owners: Owners): (host: string) => Promise<boolean> {
  const unavailable = () =>
    new ApiError(503, 'service_unavailable', 'Tracking hosts cannot be checked right now. Please try again later.');
  return async (host) => {
    let response: Response;
    try {
      response = await fetch(new URL(`${TRACKING_HOSTS_PATH}/${encodeURIComponent(host)}`, owners.sender), {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(5_000),
      });
    } catch {
      throw unavailable();
    }
    await response.body?.cancel();
    if (response.status === 200) return true;
    if (response.status === 404) return false;
    throw unavailable();
  };
}
