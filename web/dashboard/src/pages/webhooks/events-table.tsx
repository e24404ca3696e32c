// An endpoint's events, newest first, filtered by delivery status (kept in the URL with the page cursor).
import { useId } from 'react';
import { Link } from 'react-router';
import { EmptyState, ErrorMessage, Loading, StatusBadge } from '../../ui/feedback.tsx';
import { Pager, useFilters, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { DELIVERY_STATUSES, WEBHOOKS, type Webhook, type WebhookEventItem } from './api.ts';

export function EventsTable({ hook }: { hook: Webhook }) {
  const headingId = useId();
  const filterId = useId();
  const [filters, setFilters] = useFilters();
  const status = DELIVERY_STATUSES.find((s) => s === filters.status) ?? '';
  const page = useListPage<WebhookEventItem>(WEBHOOKS, `/webhooks/${hook.id}/events`, { status }, 20);
  return (
    <section className="section" aria-labelledby={headingId}>
      <div className="section-header">
        <h2 id={headingId}>Events</h2>
        <div className="actions">
          <label htmlFor={filterId}>Delivery status</label>
          <select id={filterId} value={status} onChange={(e) => setFilters({ ...filters, status: e.target.value })}>
            <option value="">All</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <button type="button" className="button small" disabled={page.isFetching} onClick={() => void page.refetch()}>
            Refresh
          </button>
        </div>
      </div>
      <ErrorMessage error={page.error} />
      {page.isPending ? <Loading /> : null}
      {page.data && page.data.data.length === 0 ? (
        <EmptyState title={status ? `No ${status} events` : 'No events yet'}>
          <p>
            {status
              ? 'None of this endpoint’s events is in that state.'
              : 'Events this endpoint subscribes to are listed here once they happen; send a test event to try it.'}
          </p>
        </EmptyState>
      ) : null}
      {page.data && page.data.data.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Events of this endpoint</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Webhook id</th>
              </tr>
            </thead>
            <tbody>
              {page.data.data.map((event) => (
                <tr key={event.id}>
                  <th scope="row">
                    <Link to={`/webhooks/${hook.id}/events/${event.id}`}>{event.type}</Link>
                  </th>
                  <td>
                    <StatusBadge status={event.status} />
                    {event.failure_reason === 'endpoint_disabled' ? (
                      <span className="muted"> endpoint disabled</span>
                    ) : null}
                  </td>
                  <td>
                    <Time value={event.created_at} stacked />
                  </td>
                  <td>
                    <code className="small-text">{event.id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Pager page={page.data} after={page.after} before={page.before} />
    </section>
  );
}
