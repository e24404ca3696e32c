// Who is signed in, on which team: the session body of GET /dashboard-api/session, loaded once and kept in
// the query cache. Its CSRF token is handed to the API client for every change.
import { createContext, useContext, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { DashboardShape } from '@postline/contracts';
import { ApiError, del, get, put, setCsrfToken } from './api/client.ts';

export type Session = DashboardShape<'DashboardSession'>;

export const SESSION_KEY = ['session'] as const;

/** The session, or null when nobody is signed in (401). Other errors are thrown to the page. */
export async function loadSession(): Promise<Session | null> {
  try {
    const session = await get<Session>('/dashboard-api/session');
    setCsrfToken(session.csrf_token);
    return session;
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 401) {
      setCsrfToken(null);
      return null;
    }
    throw err;
  }
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ session, children }: { session: Session; children: ReactNode }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

/** The signed-in session; only under the signed-in layout. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}

export function useIsAdmin(): boolean {
  return useSession().team?.role === 'admin';
}

export function useSessionQuery() {
  return useQuery({ queryKey: SESSION_KEY, queryFn: loadSession, staleTime: 60_000 });
}

/** Takes a session body answered by sign-in, setup or invite acceptance as the current one. */
export function useAdoptSession() {
  const client = useQueryClient();
  return (session: Session) => {
    setCsrfToken(session.csrf_token);
    client.clear();
    client.setQueryData(SESSION_KEY, session);
  };
}

export function useSignOut() {
  const client = useQueryClient();
  return async () => {
    try {
      await del('/dashboard-api/session');
    } finally {
      setCsrfToken(null);
      client.clear();
      client.setQueryData(SESSION_KEY, null);
    }
  };
}

export function useSwitchTeam() {
  const adopt = useAdoptSession();
  return async (teamId: string) => adopt(await put<Session>('/dashboard-api/session/team', { team_id: teamId }));
}
