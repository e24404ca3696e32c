// The webhook routes' shapes and query keys, shared by the endpoint, event and list pages.
import { useQuery } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { get } from '../../api/client.ts';

export type WebhookItem = ApiShape<'WebhookList'>['data'][number];
export type Webhook = ApiShape<'Webhook'>;
export type WebhookEventItem = ApiShape<'WebhookEventList'>['data'][number];
export type WebhookEvent = ApiShape<'WebhookEvent'>;
export type WebhookAttempt = ApiShape<'WebhookAttemptList'>['data'][number];
export type DeliveryStatus = WebhookEventItem['status'];

export type ReplayWebhookEventsBody = ApiRequest<'ReplayWebhookEventsBody'>;
export type WebhookReplay = ApiShape<'WebhookReplay'>;
export type TestWebhookBody = ApiRequest<'TestWebhookBody'>;
export type WebhookTestEvent = ApiShape<'WebhookTestEvent'>;

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'attempting', 'success', 'failed'];

/** Every webhook query starts with this key, so one invalidation refreshes the list, the endpoint and its events. */
export const WEBHOOKS = 'webhooks';

export function useWebhook(id: string) {
  return useQuery({
    queryKey: [WEBHOOKS, 'endpoint', id],
    queryFn: () => get<Webhook>(`/webhooks/${id}`),
  });
}

/** The endpoint's address without the scheme's noise, for headings and links. */
export function shortUrl(endpoint: string): string {
  return endpoint.replace(/^https?:\/\//, '');
}
