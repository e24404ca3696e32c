import { normalizePath } from './routes.ts';

/** The families whose changes are a team's configuration or data, and so are audited (sending is not: /logs has it). */
const AUDITED = new Set([
  'api-keys',
  'domains',
  'webhooks',
  'contacts',
  'contact-properties',
  'segments',
  'audiences',
  'topics',
  'templates',
  'broadcasts',
  'suppressions',
  'reputation',
  'forms',
]);

const CHANGES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

export type AuditAction = { action: string; target_type: string; target_id: string | null };

/**
 * What a successful request changed, or undefined when it changed nothing audited. The action is
 * `<family>.created|updated|deleted`, or `<family>.<word>` for a POST to a named sub-route
 * (`POST /domains/{id}/verify` → `domains.verify`); the target is the id in the path, else the created id.
 */
export function auditActionOf(method: string, path: string, responseId: unknown): AuditAction | undefined {
  if (!CHANGES.has(method)) return undefined;
  const segments = normalizePath(path).split('/').filter(Boolean);
  const family = segments[0];
  if (!family || !AUDITED.has(family)) return undefined;
  const last = segments[segments.length - 1] ?? '';
  // A family's settings (`PATCH /broadcasts/settings`) are the team's, not a resource of that id.
  if (segments.length === 2 && segments[1] === 'settings') {
    return { action: `${family}.settings_updated`, target_type: family, target_id: null };
  }
  // Resuming the sending the reputation guard paused is the team's (or a domain's, named in the body).
  if (family === 'reputation' && last === 'resume') {
    return { action: 'reputation.resumed', target_type: 'reputation', target_id: null };
  }
  let verb: string;
  if (method === 'POST' && segments.length === 1) verb = 'created';
  else if (method === 'DELETE' && segments.length === 2) verb = 'deleted';
  else if (method === 'POST' && segments.length >= 3 && /^[a-z][a-z-]*$/.test(last)) verb = last;
  else verb = 'updated';
  const target = segments[1] ?? (typeof responseId === 'string' ? responseId : null);
  return { action: `${family}.${verb}`, target_type: family, target_id: target?.slice(0, 200) ?? null };
}
