// Who acts on a team: its members and its API keys, as several pages name them (the audit log's actors, a
// template version's author, the key that sent an email, the logs' key filter). Both lists are admins' only
// in the API, so a page asks for them only for an admin; every page shares the same cached copy.
import { useQuery } from '@tanstack/react-query';
import type { ApiShape, DashboardShape } from '@postline/contracts';
import { get } from './client.ts';

export const MEMBERS = ['members'];
export const ALL_API_KEYS = ['api-keys', 'all'];

/** The team's members (admins only; pass `enabled: false` for anyone else). */
export function useMembers({ enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({
    queryKey: MEMBERS,
    queryFn: () => get<DashboardShape<'MemberList'>>('/dashboard-api/members'),
    enabled,
    retry: false,
  });
}

/** The team's API keys, the first 100 (admins only; pass `enabled: false` for anyone else). */
export function useApiKeyNames({ enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({
    queryKey: ALL_API_KEYS,
    queryFn: () => get<ApiShape<'ApiKeyList'>>('/api-keys', { limit: 100 }),
    enabled,
    retry: false,
  });
}
