import type { RequestHandler, Response } from 'express';
import { isUuid } from '../ids/ids.ts';
import { ApiError } from '../errors/errors.ts';

/** Set by the gateway on every forwarded request; owners trust it because only the gateway reaches them. */
export const TEAM_HEADER = 'x-postline-team-id';
/** The other headers the gateway forwards to owners: the API key used, its permission and its domain. */
export const KEY_HEADER = 'x-postline-api-key-id';
export const PERMISSION_HEADER = 'x-postline-key-permission';
/** The id of the gateway's log of the request (GET /logs/{id}), made before it is forwarded. */
export const REQUEST_LOG_HEADER = 'x-postline-request-log-id';
/** Set for a key limited to one sending domain: the sender lets it send only from that domain. */
export const KEY_DOMAIN_HEADER = 'x-postline-key-domain-id';
/**
 * On a send, the addresses of the team's members (lower-case, comma-separated), to which the onboarding
 * sender may send before the team has a verified domain.
 */
export const TEAM_MEMBERS_HEADER = 'x-postline-team-members';
/**
 * On a request made from a dashboard session: the signed-in user's id and their role in the team (`admin` or
 * `member`); absent for an API key. Owners record who did what (a template version's author) and let a
 * role decide (a member's broadcast waiting for an admin's approval).
 */
export const USER_HEADER = 'x-postline-user-id';
export const USER_ROLE_HEADER = 'x-postline-user-role';
/** The client's Idempotency-Key: owners deduplicate on it too, in case the gateway died mid-request. */
export const IDEMPOTENCY_HEADER = 'x-postline-idempotency-key';
/**
 * With it, the gateway's hash of the request (method, path, body, batch mode): an owner that finds the key
 * used for another request answers 409 invalid_idempotent_request, as the gateway does.
 */
export const IDEMPOTENCY_HASH_HEADER = 'x-postline-idempotency-hash';

/** The dashboard user behind a forwarded request, from the gateway's headers; undefined for an API key. */
export function userOf(req: {
  header(name: string): string | undefined;
}): { id: string; role: 'admin' | 'member' } | undefined {
  const id = req.header(USER_HEADER);
  const role = req.header(USER_ROLE_HEADER);
  if (!id || !isUuid(id) || (role !== 'admin' && role !== 'member')) return undefined;
  return { id, role };
}

/**
 * Guards an owner's internal API: a request without the gateway's team header did not come through the
 * gateway and is refused. The team is then available as `teamOf(res)`.
 */
export function requireTeam(): RequestHandler {
  return (req, res, next) => {
    const team = req.header(TEAM_HEADER);
    if (!team || !isUuid(team)) {
      throw new ApiError(401, 'missing_api_key', 'Internal API: requests must come through the API gateway.');
    }
    res.locals.teamId = team;
    next();
  };
}

export function teamOf(res: Response): string {
  const team = (res.locals as { teamId?: string }).teamId;
  if (!team) throw new Error('requireTeam did not run');
  return team;
}
