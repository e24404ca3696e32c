// What the Broadcasts pages read: a broadcast, its review, the team's broadcast settings, under keys that a
// change to a broadcast empties.
import { useQuery } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { get } from '../../api/client.ts';

export const BROADCASTS = 'broadcasts';

export type Broadcast = ApiShape<'Broadcast'>;
export type BroadcastItem = ApiShape<'BroadcastList'>['data'][number];
export type BroadcastStatus = Broadcast['status'];
export type Review = ApiShape<'BroadcastReview'>;

/** Each status as the pages name it (a Record, so none is left out). */
export const STATUS_LABELS: Record<BroadcastStatus, string> = {
  draft: 'Draft',
  awaiting_approval: 'Awaiting approval',
  scheduled: 'Scheduled',
  queued: 'Sending',
  sent: 'Sent',
  canceled: 'Canceled',
};

export function useBroadcast(id: string, poll = false) {
  return useQuery({
    queryKey: [BROADCASTS, 'one', id],
    queryFn: () => get<Broadcast>(`/broadcasts/${id}`),
    // While it sends, its status moves on by itself.
    refetchInterval: (query) => (poll || query.state.data?.status === 'queued' ? 2500 : false),
  });
}

export function useReview(id: string) {
  return useQuery({ queryKey: [BROADCASTS, 'review', id], queryFn: () => get<Review>(`/broadcasts/${id}/review`) });
}

export function useBroadcastSettings() {
  return useQuery({
    queryKey: [BROADCASTS, 'settings'],
    queryFn: () => get<ApiShape<'BroadcastSettings'>>('/broadcasts/settings'),
  });
}
