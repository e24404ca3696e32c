// The team's webhook endpoints: each with its URL, the events it receives and whether it is enabled; a new
// one is created here and opened at once, its signing secret one click away.
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { post } from '../../api/client.ts';
import { Dialog } from '../../ui/dialog.tsx';
import { EmptyState, StatusBadge } from '../../ui/feedback.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { shortUrl, WEBHOOKS, type WebhookItem } from './api.ts';
import { EndpointForm, type EndpointInput } from './endpoint-form.tsx';
import { ALL_EVENTS } from './events.ts';

export function WebhookList() {
  const page = useListPage<WebhookItem>(WEBHOOKS, '/webhooks');
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Webhooks</h1>
          <p className="muted">Endpoints that receive your team&apos;s events, each signed with its own secret.</p>
        </div>
        <CreateWebhook />
      </div>
      <ListTable
        query={page}
        caption="Webhook endpoints"
        columns={['Endpoint', 'Events', 'Status', 'Created']}
        empty={
          <EmptyState title="No webhook endpoints yet">
            <p>Add an endpoint to hear about deliveries, bounces, opens, contacts and domains as they happen.</p>
          </EmptyState>
        }
        row={(hook) => (
          <tr key={hook.id}>
            <th scope="row" className="webhook-url">
              <Link to={`/webhooks/${hook.id}`}>{shortUrl(hook.endpoint)}</Link>
            </th>
            <td>
              <EventSummary events={hook.events} />
            </td>
            <td>
              <StatusBadge status={hook.status} />
            </td>
            <td>
              <Time value={hook.created_at} />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

/** "All 19 events", or the first few names and how many more. */
export function EventSummary({ events }: { events: readonly string[] }) {
  if (events.length >= ALL_EVENTS.length) return <span>All {ALL_EVENTS.length} events</span>;
  const shown = events.slice(0, 3);
  return (
    <span>
      {shown.map((name, i) => (
        <span key={name}>
          {i > 0 ? ', ' : ''}
          <code>{name}</code>
        </span>
      ))}
      {events.length > shown.length ? <span className="muted"> and {events.length - shown.length} more</span> : null}
    </span>
  );
}

function CreateWebhook() {
  const client = useQueryClient();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const create = async (input: EndpointInput) => {
    const body: ApiRequest<'CreateWebhookBody'> = input;
    const created = await post<ApiShape<'WebhookSecret'>>('/webhooks', body);
    await client.invalidateQueries({ queryKey: [WEBHOOKS] });
    setOpen(false);
    await navigate(`/webhooks/${created.id}`);
  };
  return (
    <>
      <button type="button" className="button primary" onClick={() => setOpen(true)}>
        Add endpoint
      </button>
      <Dialog open={open} title="Add a webhook endpoint" onClose={() => setOpen(false)}>
        <EndpointForm
          label="Add a webhook endpoint"
          submitLabel="Add endpoint"
          onSubmit={create}
          onCancel={() => setOpen(false)}
        />
      </Dialog>
    </>
  );
}
