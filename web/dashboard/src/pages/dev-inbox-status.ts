// Whether the development inbox is on: read by every page's banner (the layout) and the Dev inbox page.
import { useQuery } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { get } from '../api/client.ts';

/** The query key of everything the inbox shows (its status, pages and messages): emptied together. */
export const DEV_INBOX = 'dev-inbox';

/** Whether the development inbox is on, and how many messages it keeps for the team. */
export function useDevInbox() {
  return useQuery({
    queryKey: [DEV_INBOX, 'status'],
    queryFn: () => get<ApiShape<'DevInboxStatus'>>('/dev-inbox'),
    staleTime: 60_000,
  });
}
