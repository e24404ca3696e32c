// Getting events to an endpoint again: a signed sample event of any type (to try a receiver), and every
// failed event since a time the person picks delivered once more (after an outage of their receiver).
import { useId, useState } from 'react';
import { Link } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { post } from '../../api/client.ts';
import { Notice } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { formatTime } from '../../ui/time.tsx';
import {
  WEBHOOKS,
  type ReplayWebhookEventsBody,
  type TestWebhookBody,
  type Webhook,
  type WebhookReplay,
  type WebhookTestEvent,
} from './api.ts';
import { ALL_EVENTS } from './events.ts';

export function Recovery({ hook }: { hook: Webhook }) {
  const headingId = useId();
  return (
    <section className="section" aria-labelledby={headingId}>
      <h2 id={headingId}>Test and recover</h2>
      <div className="grid">
        <div className="card webhook-card">
          <SendTest hook={hook} />
        </div>
        <div className="card webhook-card">
          <ReplayFailed hook={hook} />
        </div>
      </div>
    </section>
  );
}

function SendTest({ hook }: { hook: Webhook }) {
  const client = useQueryClient();
  const [sent, setSent] = useState<WebhookTestEvent | null>(null);
  const send = async (data: FormData) => {
    setSent(null);
    const body: TestWebhookBody = { type: text(data, 'type') as TestWebhookBody['type'] };
    setSent(await post<WebhookTestEvent>(`/webhooks/${hook.id}/test`, body));
    await client.invalidateQueries({ queryKey: [WEBHOOKS] });
  };
  return (
    <>
      <h3>Send a test event</h3>
      <ActionForm action={send} submitLabel="Send test event" label="Send a test event">
        <Field label="Event type" hint="A signed sample of this event, delivered like any other.">
          {(p) => (
            <select {...p} name="type" defaultValue="email.sent">
              {ALL_EVENTS.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          )}
        </Field>
      </ActionForm>
      {sent ? (
        <Notice tone="success">
          Test event <code>{sent.type}</code> sent:{' '}
          <Link to={`/webhooks/${hook.id}/events/${sent.id}`}>see its delivery</Link>.
        </Notice>
      ) : null}
    </>
  );
}

/** `datetime-local`'s value (the reader's local time, to the minute) for a time. */
function localInputValue(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function ReplayFailed({ hook }: { hook: Webhook }) {
  const client = useQueryClient();
  const [done, setDone] = useState<WebhookReplay | null>(null);
  const [defaultSince] = useState(() => localInputValue(new Date(Date.now() - 86_400_000)));
  const replay = async (data: FormData) => {
    setDone(null);
    const since = new Date(text(data, 'since'));
    if (Number.isNaN(since.getTime())) throw new Error('Pick the date and time to replay from.');
    const body: ReplayWebhookEventsBody = { since: since.toISOString(), status: 'failed' };
    setDone(await post<WebhookReplay>(`/webhooks/${hook.id}/events/replay`, body));
    await client.invalidateQueries({ queryKey: [WEBHOOKS] });
  };
  return (
    <>
      <h3>Replay failed events</h3>
      <ActionForm action={replay} submitLabel="Replay failed events" label="Replay failed events">
        <Field
          label="Failed since"
          hint="Every event that failed since then (in your time zone) is delivered once more, with the same webhook-id."
        >
          {(p) => <input {...p} name="since" type="datetime-local" required defaultValue={defaultSince} />}
        </Field>
      </ActionForm>
      {done ? (
        <Notice tone="success">
          {done.replayed === 0
            ? 'No failed events since then.'
            : `${done.replayed} failed event${done.replayed === 1 ? '' : 's'} delivered again.`}
          {done.next_since ? ` More remain: replay again from ${formatTime(done.next_since)}.` : null}
        </Notice>
      ) : null}
    </>
  );
}
