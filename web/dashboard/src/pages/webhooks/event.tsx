// One event of an endpoint: the body it delivers (its payload), its state and next attempt, and every
// attempt made (time, the response's status code and first 4 KB, or the error); replay sends it once more.
import { useId, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { get, post } from '../../api/client.ts';
import { CopyButton } from '../../ui/copy.tsx';
import { EmptyState, ErrorMessage, Loading, Notice, StatusBadge } from '../../ui/feedback.tsx';
import { Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { shortUrl, useWebhook, WEBHOOKS, type WebhookAttempt, type WebhookEvent } from './api.ts';

export function WebhookEventPage() {
  const { webhookId = '', eventId = '' } = useParams();
  const hook = useWebhook(webhookId);
  const event = useQuery({
    queryKey: [WEBHOOKS, 'event', webhookId, eventId],
    queryFn: () => get<WebhookEvent>(`/webhooks/${webhookId}/events/${eventId}`),
  });
  return (
    <>
      <p>
        <Link to={`/webhooks/${webhookId}`}>← {hook.data ? shortUrl(hook.data.endpoint) : 'Endpoint'}</Link>
      </p>
      <ErrorMessage error={event.error} />
      {event.isPending ? <Loading /> : null}
      {event.data ? <EventBody webhookId={webhookId} event={event.data} /> : null}
    </>
  );
}

function EventBody({ webhookId, event }: { webhookId: string; event: WebhookEvent }) {
  const payloadId = useId();
  const payload = JSON.stringify(event.payload, null, 2);
  return (
    <>
      <div className="page-header">
        <div>
          <h1>{event.type}</h1>
          <p className="muted">
            <StatusBadge status={event.status} />
            {event.failure_reason === 'endpoint_disabled' ? ' (its endpoint was disabled by its failures)' : null}{' '}
            Created <Time value={event.created_at} />
          </p>
        </div>
        <Replay webhookId={webhookId} event={event} />
      </div>
      <dl className="facts card">
        <dt>Webhook id</dt>
        <dd>
          <code>{event.id}</code>
        </dd>
        <dt>Attempts made</dt>
        <dd>{event.attempts} of 8 scheduled</dd>
        <dt>Next attempt</dt>
        <dd>
          <Time value={event.next_attempt_at} fallback="None scheduled" />
        </dd>
      </dl>
      <section className="section" aria-labelledby={payloadId}>
        <div className="section-header">
          <h2 id={payloadId}>Payload</h2>
          <CopyButton value={payload} label="Copy the payload" />
        </div>
        <pre className="block">{payload}</pre>
      </section>
      <Attempts webhookId={webhookId} eventId={event.id} />
    </>
  );
}

function Replay({ webhookId, event }: { webhookId: string; event: WebhookEvent }) {
  const client = useQueryClient();
  const [state, setState] = useState<'idle' | 'busy' | 'done'>('idle');
  const [error, setError] = useState<unknown>(null);
  const replay = async () => {
    setState('busy');
    setError(null);
    try {
      await post<Pick<ApiShape<'WebhookEvent'>, 'object' | 'id'>>(`/webhooks/${webhookId}/events/${event.id}/replay`);
      setState('done');
      await client.invalidateQueries({ queryKey: [WEBHOOKS] });
    } catch (err) {
      setError(err);
      setState('idle');
    }
  };
  return (
    <div>
      <button type="button" className="button primary" disabled={state === 'busy'} onClick={() => void replay()}>
        Replay event
      </button>
      {state === 'done' ? (
        <Notice tone="success">Replay sent: one more delivery with the same webhook id.</Notice>
      ) : null}
      <ErrorMessage error={error} />
    </div>
  );
}

/** What each failure the dispatcher records means (a non-2xx answer, `status`, shows its code instead). */
const ATTEMPT_ERRORS: Record<string, string> = {
  redirect: 'A redirect: redirects are not followed.',
  timeout: 'No answer within 15 seconds.',
  refused: 'The connection was refused.',
  dns: 'The host name did not resolve.',
  tls: 'The TLS handshake failed.',
  blocked_address: 'The host resolved to a private or reserved address.',
  connection: 'The connection failed.',
  invalid_request: 'The request could not be made to this URL.',
};

function Attempts({ webhookId, eventId }: { webhookId: string; eventId: string }) {
  const headingId = useId();
  const client = useQueryClient();
  const page = useListPage<WebhookAttempt>(WEBHOOKS, `/webhooks/${webhookId}/events/${eventId}/attempts`, {}, 20);
  return (
    <section className="section" aria-labelledby={headingId}>
      <div className="section-header">
        <h2 id={headingId}>Attempts</h2>
        <button
          type="button"
          className="button small"
          disabled={page.isFetching}
          onClick={() => void client.invalidateQueries({ queryKey: [WEBHOOKS] })}
        >
          Refresh
        </button>
      </div>
      <ErrorMessage error={page.error} />
      {page.isPending ? <Loading /> : null}
      {page.data && page.data.data.length === 0 ? (
        <EmptyState title="No attempts yet">
          <p>The first attempt is under way.</p>
        </EmptyState>
      ) : null}
      {page.data && page.data.data.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Delivery attempts</caption>
            <thead>
              <tr>
                <th scope="col">Sent</th>
                <th scope="col">Status code</th>
                <th scope="col">Response (first 4 KB)</th>
              </tr>
            </thead>
            <tbody>
              {page.data.data.map((attempt) => (
                <tr key={attempt.id}>
                  <th scope="row">
                    <Time value={attempt.sent_at} />
                    {attempt.replay ? <span className="muted small-text"> (replay)</span> : null}
                  </th>
                  <td>
                    {attempt.http_status_code === null ? (
                      <span className="attempt-error">No response</span>
                    ) : (
                      <span className={attempt.http_status_code < 300 ? 'badge badge-good' : 'badge badge-bad'}>
                        {attempt.http_status_code}
                      </span>
                    )}
                  </td>
                  <td className="attempt-response">
                    {attempt.error && attempt.error !== 'status' ? (
                      <p className="attempt-error">{ATTEMPT_ERRORS[attempt.error] ?? attempt.error}</p>
                    ) : null}
                    {attempt.response ? (
                      <pre className="block">{attempt.response}</pre>
                    ) : (
                      <span className="muted">Empty</span>
                    )}
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
