// What the Audience pages read more than once: the team's segments, topics and contact properties (each
// list whole, up to 100), under keys that a change to any of them empties.
import { useQuery } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { get } from '../../api/client.ts';
import { useListPage } from '../../ui/list.tsx';

export const CONTACTS = 'contacts';
export const SEGMENTS = 'segments';
export const TOPICS = 'topics';
export const PROPERTIES = 'contact-properties';

export type Segment = ApiShape<'SegmentList'>['data'][number];
export type CountedSegment = ApiShape<'CountedSegmentList'>['data'][number];
export type Topic = ApiShape<'TopicList'>['data'][number];
export type Property = ApiShape<'ContactPropertyList'>['data'][number];

export function useSegments() {
  return useQuery({
    queryKey: [SEGMENTS, 'all'],
    queryFn: () => get<ApiShape<'SegmentList'>>('/segments', { limit: 100 }),
  });
}

export function useTopics() {
  return useQuery({ queryKey: [TOPICS, 'all'], queryFn: () => get<ApiShape<'TopicList'>>('/topics', { limit: 100 }) });
}

export function useProperties() {
  return useQuery({
    queryKey: [PROPERTIES, 'all'],
    queryFn: () => get<ApiShape<'ContactPropertyList'>>('/contact-properties', { limit: 100 }),
  });
}

/**
 * The same page of a list read again with `counts=true`, apart from the rows, so that the rows show at once
 * and their counts (a pass over the team's contacts, long at a million) when they come: the page's row of
 * an id, with its counts.
 */
export function useListCounts<T extends { id: string }>(key: string, path: string) {
  const counted = useListPage<T>(key, path, { counts: 'true' });
  return (id: string): T | undefined => counted.data?.data.find((row) => row.id === id);
}
