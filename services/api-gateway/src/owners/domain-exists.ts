import { ApiError, TEAM_HEADER } from '@postline/platform';
import type { Owners } from '../domain/routes.ts';

/**
 * Asks the domain-verifier whether a team owns a domain (GET /domains/{id} with the team header): 200 is
 * yes, 404 no; anything else, or no answer within 10 s, is a 503 for the caller.
 */
export function createDomainExists(owners: Owners): (teamId: string, domainId: string) => Promise<boolean> {
  return async (teamId: string, domainId: string): Promise<boolean> => {
    let response: Response;
    try {
      response = await fetch(new URL(`/domains/${domainId}`, owners['domain-verifier']), {
        headers: { [TEAM_HEADER]: teamId, accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
    } catch {
      throw new ApiError(503, 'service_unavailable', 'Domains cannot be checked right now. Please try again later.');
    }
    await response.body?.cancel();
    if (response.status === 200) return true;
    if (response.status === 404) return false;
    throw new ApiError(503, 'service_unavailable', 'Domains cannot be checked right now. Please try again later.');
  };
}
