// One webhook endpoint: its address and events (edited in place), its status (a disabled endpoint's reason
// and a way back), its signing secret, test and recovery, and its recent events by delivery status.
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest } from '@postline/contracts';
import { del, patch } from '../../api/client.ts';
import { ConfirmButton, Dialog } from '../../ui/dialog.tsx';
import { ErrorMessage, Loading, StatusBadge } from '../../ui/feedback.tsx';
import { Time } from '../../ui/time.tsx';
import { shortUrl, useWebhook, WEBHOOKS, type Webhook } from './api.ts';
import { EndpointForm, type EndpointInput } from './endpoint-form.tsx';
import { EventsTable } from './events-table.tsx';
import { Recovery } from './recovery.tsx';
import { SigningSecret } from './secret.tsx';

export function WebhookDetail() {
  const { webhookId = '' } = useParams();
  const hook = useWebhook(webhookId);
  return (
    <>
      <p>
        <Link to="/webhooks">← Webhooks</Link>
      </p>
      <ErrorMessage error={hook.error} />
      {hook.isPending ? <Loading /> : null}
      {hook.data ? <Endpoint hook={hook.data} /> : null}
    </>
  );
}

function Endpoint({ hook }: { hook: Webhook }) {
  return (
    <>
      <div className="page-header">
        <div>
          <h1 className="webhook-url">{shortUrl(hook.endpoint)}</h1>
          <p className="muted">
            <StatusBadge status={hook.status} /> Created <Time value={hook.created_at} />
          </p>
        </div>
        <div className="actions">
          <EditEndpoint hook={hook} />
          {hook.status === 'enabled' ? <SetStatus hook={hook} status="disabled" /> : null}
          <DeleteEndpoint hook={hook} />
        </div>
      </div>
      {/* Disabled by its failures, it is shown by the banner on every page (disabled-banner.tsx). */}
      {hook.status === 'disabled' && hook.disabled_by !== 'failures' ? <DisabledBanner hook={hook} /> : null}
      <dl className="facts card">
        <dt>URL</dt>
        <dd>
          <code>{hook.endpoint}</code>
        </dd>
        <dt>Events</dt>
        <dd>
          <ul className="event-names">
            {hook.events.map((name) => (
              <li key={name}>
                <code>{name}</code>
              </li>
            ))}
          </ul>
        </dd>
        <dt>Id</dt>
        <dd>
          <code>{hook.id}</code>
        </dd>
      </dl>
      <SigningSecret hook={hook} />
      <Recovery hook={hook} />
      <EventsTable hook={hook} />
    </>
  );
}

function DisabledBanner({ hook }: { hook: Webhook }) {
  return (
    <div role="alert" className="alert alert-warning webhook-disabled">
      <div>
        <strong>This endpoint is disabled</strong>
        {hook.disabled_reason ? `: ${hook.disabled_reason}` : ''}. Events that happen while it is disabled are not
        recorded for it; those that were waiting for a retry end as failed, and can be replayed once it is enabled
        again.
      </div>
      <SetStatus hook={hook} status="enabled" />
    </div>
  );
}

function SetStatus({ hook, status }: { hook: Webhook; status: 'enabled' | 'disabled' }) {
  const client = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const change = async () => {
    setBusy(true);
    setError(null);
    try {
      const body: ApiRequest<'UpdateWebhookBody'> = { status };
      await patch(`/webhooks/${hook.id}`, body);
      await client.invalidateQueries({ queryKey: [WEBHOOKS] });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        className={status === 'enabled' ? 'button primary' : 'button'}
        disabled={busy}
        onClick={() => void change()}
      >
        {status === 'enabled' ? 'Enable endpoint' : 'Disable endpoint'}
      </button>
      <ErrorMessage error={error} />
    </>
  );
}

function EditEndpoint({ hook }: { hook: Webhook }) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const save = async (input: EndpointInput) => {
    const body: ApiRequest<'UpdateWebhookBody'> = input;
    await patch(`/webhooks/${hook.id}`, body);
    await client.invalidateQueries({ queryKey: [WEBHOOKS] });
    setOpen(false);
  };
  return (
    <>
      <button type="button" className="button" onClick={() => setOpen(true)}>
        Edit endpoint
      </button>
      <Dialog open={open} title="Edit the endpoint" onClose={() => setOpen(false)}>
        <EndpointForm
          label="Edit the endpoint"
          submitLabel="Save"
          initial={hook}
          onSubmit={save}
          onCancel={() => setOpen(false)}
        />
      </Dialog>
    </>
  );
}

function DeleteEndpoint({ hook }: { hook: Webhook }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  return (
    <ConfirmButton
      label="Delete endpoint"
      title="Delete this endpoint?"
      confirmLabel="Delete endpoint"
      onConfirm={async () => {
        await del(`/webhooks/${hook.id}`);
        // Away from the page first, so that nothing asks for the endpoint that is gone.
        await navigate('/webhooks');
        client.removeQueries({ queryKey: [WEBHOOKS, 'endpoint', hook.id] });
        await client.invalidateQueries({ queryKey: [WEBHOOKS] });
      }}
    >
      <p>
        No more events are sent to <code>{hook.endpoint}</code>, and its events and their attempts are deleted with it.
        This cannot be undone.
      </p>
    </ConfirmButton>
  );
}
