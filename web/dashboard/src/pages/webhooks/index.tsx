// Webhooks: the endpoints list, one endpoint (its secret, its events, recovery), and one event (its payload
// and delivery attempts). Each is its own address, so a person can share a link to a failing event.
import { Route, Routes } from 'react-router';
import { WebhookDetail } from './detail.tsx';
import { WebhookEventPage } from './event.tsx';
import { WebhookList } from './list.tsx';

export default function Webhooks() {
  return (
    <Routes>
      <Route index element={<WebhookList />} />
      <Route path=":webhookId" element={<WebhookDetail />} />
      <Route path=":webhookId/events/:eventId" element={<WebhookEventPage />} />
    </Routes>
  );
}
