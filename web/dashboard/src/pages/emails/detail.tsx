// One email: its fields; its content as a sandboxed preview (remote images off until asked), its HTML source
// and its text; where each recipient stands and what its server last said (read again every few seconds
// while a delivery is still to come); its insights; a share link; and for a scheduled email, reschedule and
// cancel.
import { useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { ApiError, get, patch, post } from '../../api/client.ts';
import { useApiKeyNames } from '../../api/people.ts';
import { CodeValue, PartSource, SourceBlock } from '../../ui/copy.tsx';
import { ConfirmButton, Dialog } from '../../ui/dialog.tsx';
import { ErrorMessage, Loading, Notice, StatusBadge } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { EmailFrame } from '../../ui/email-frame.tsx';
import { Tabs } from '../../ui/tabs.tsx';
import { useIsAdmin } from '../../session.tsx';
import { fromLocalInput, Time, toLocalInput } from '../../ui/time.tsx';
import { EMAILS } from './list.tsx';

type Email = ApiShape<'Email'>;
type Recipient = ApiShape<'EmailRecipientList'>['data'][number];

const EMAIL = 'email';
const RECIPIENTS = 'email-recipients';
/** How often the recipients are read again while one still waits for a delivery. */
const POLL_MS = 4000;
const WAITING = new Set(['pending', 'deferred']);

export function EmailPage() {
  const { id = '' } = useParams();
  const email = useQuery({
    queryKey: [EMAIL, id],
    queryFn: () => get<Email>(`/emails/${encodeURIComponent(id)}`),
  });
  if (email.error) {
    const gone = email.error instanceof ApiError && email.error.statusCode === 404;
    return (
      <>
        <h1>{gone ? 'Email not found' : 'Email'}</h1>
        <ErrorMessage error={email.error} />
        <Link to="/emails">Back to emails</Link>
      </>
    );
  }
  if (!email.data) return <Loading />;
  return <EmailView email={email.data} />;
}

function EmailView({ email }: { email: Email }) {
  const scheduled = email.last_event === 'scheduled';
  return (
    <>
      <p>
        <Link to="/emails">← Emails</Link>
      </p>
      <div className="page-header">
        <div>
          <h1 className="break-anywhere">{email.subject || '(no subject)'}</h1>
          <p className="muted">
            <StatusBadge status={email.last_event} /> Created <Time value={email.created_at} />
          </p>
        </div>
        <div className="actions">
          <ShareEmail email={email} />
          {scheduled ? (
            <>
              <Reschedule email={email} />
              <CancelScheduled email={email} />
            </>
          ) : null}
        </div>
      </div>
      {scheduled && email.scheduled_at ? (
        <Notice>
          Scheduled for <Time value={email.scheduled_at} />: it is sent then, unless you reschedule or cancel it.
        </Notice>
      ) : null}
      <dl className="facts card">
        <dt>From</dt>
        <dd>{email.from}</dd>
        <dt>To</dt>
        <dd>{email.to.join(', ')}</dd>
        {email.cc?.length ? (
          <>
            <dt>Cc</dt>
            <dd>{email.cc.join(', ')}</dd>
          </>
        ) : null}
        {email.bcc?.length ? (
          <>
            <dt>Bcc</dt>
            <dd>{email.bcc.join(', ')}</dd>
          </>
        ) : null}
        {email.reply_to?.length ? (
          <>
            <dt>Reply-To</dt>
            <dd>{email.reply_to.join(', ')}</dd>
          </>
        ) : null}
        {email.tags.length ? (
          <>
            <dt>Tags</dt>
            <dd>{email.tags.map((t) => `${t.name}: ${t.value}`).join(', ')}</dd>
          </>
        ) : null}
        <dt>Email id</dt>
        <dd>
          <CodeValue value={email.id} label="Copy the email id" />
        </dd>
        <SentBy email={email} />
        {email.message_id ? (
          <>
            <dt>Message-ID</dt>
            <dd>
              <code>{email.message_id}</code>
            </dd>
          </>
        ) : null}
      </dl>
      <Recipients email={email} />
      <Insights email={email} />
      <Content email={email} />
    </>
  );
}

/** The API key that sent the email (by name where the reader may list keys) and a link to its request's log. */
function SentBy({ email }: { email: Email }) {
  const admin = useIsAdmin();
  const keys = useApiKeyNames({ enabled: admin && email.api_key_id !== null });
  if (!email.api_key_id && !email.request_id) return null;
  const keyName = keys.data?.data.find((k) => k.id === email.api_key_id)?.name;
  return (
    <>
      {email.api_key_id ? (
        <>
          <dt>API key</dt>
          <dd>
            <Link to={`/emails?api_key_id=${email.api_key_id}`}>{keyName ?? <code>{email.api_key_id}</code>}</Link>{' '}
            <span className="muted small-text">(its emails)</span>
          </dd>
        </>
      ) : null}
      {email.request_id ? (
        <>
          <dt>Sent by</dt>
          <dd>
            <Link to={`/logs/${email.request_id}`}>The API request</Link>
          </dd>
        </>
      ) : null}
    </>
  );
}

function Recipients({ email }: { email: Email }) {
  const recipients = useQuery({
    queryKey: [RECIPIENTS, email.id],
    queryFn: () => get<ApiShape<'EmailRecipientList'>>(`/emails/${email.id}/recipients`),
    // Polls only while a recipient waits for a delivery (and the email is not merely scheduled).
    refetchInterval: (query) =>
      email.last_event !== 'scheduled' && query.state.data?.data.some((r) => WAITING.has(r.status)) ? POLL_MS : false,
  });
  const client = useQueryClient();
  const settled = Boolean(recipients.data) && !recipients.data?.data.some((r) => WAITING.has(r.status));
  // When every recipient has settled, the email's last event has moved on too: read it again.
  useEffect(() => {
    if (settled) void client.invalidateQueries({ queryKey: [EMAIL, email.id] });
  }, [settled, email.id, client]);
  return (
    <section aria-labelledby="recipients-title" className="section">
      <h2 id="recipients-title">Recipients</h2>
      <ErrorMessage error={recipients.error} />
      {recipients.data ? (
        // Focusable: on a narrow screen the table scrolls sideways, which a keyboard must reach too.
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Recipients, scrollable">
          <table>
            <caption className="visually-hidden">Recipients</caption>
            <thead>
              <tr>
                <th scope="col">Address</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">What the receiving server said</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {recipients.data.data.map((r) => (
                <RecipientRow key={r.address} recipient={r} />
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <Loading />
      )}
      <Attempts email={email} polling={recipients.dataUpdatedAt} />
      <Timeline email={email} polling={recipients.dataUpdatedAt} />
    </section>
  );
}

type EmailEvent = ApiShape<'EmailEventList'>['data'][number];

/** What each event of the email was, oldest first, with what it says beyond its type. */
export function Timeline({ email, polling }: { email: Email; polling: number }) {
  const events = useQuery({
    queryKey: ['email-events', email.id, polling],
    queryFn: () => get<ApiShape<'EmailEventList'>>(`/emails/${email.id}/events`),
    placeholderData: (previous) => previous,
  });
  // Where each event went as a webhook (the first 100 events': the API takes that many ids at once).
  const ids = (events.data?.data ?? []).slice(0, 100).map((e) => e.id);
  const deliveries = useQuery({
    queryKey: ['email-webhook-deliveries', email.id, ids],
    queryFn: () => get<ApiShape<'WebhookDeliveryList'>>('/webhooks/deliveries', { source_event_id: ids.join(',') }),
    enabled: ids.length > 0,
    placeholderData: (previous) => previous,
  });
  const deliveriesOf = (eventId: string) => (deliveries.data?.data ?? []).filter((d) => d.source_event_id === eventId);
  return (
    <section aria-labelledby="timeline-title">
      <h3 id="timeline-title">Timeline</h3>
      <ErrorMessage error={events.error} />
      {events.data ? (
        events.data.data.length === 0 ? (
          <p className="muted">No event yet.</p>
        ) : (
          <ol className="timeline" aria-label="Events">
            {events.data.data.map((e) => (
              <li key={e.id}>
                <Time value={e.created_at} /> <StatusBadge status={e.type.replace(/^email\./, '')} />{' '}
                <EventDetail event={e} />
                <WebhookDeliveries deliveries={deliveriesOf(e.id)} />
              </li>
            ))}
          </ol>
        )
      ) : (
        <Loading />
      )}
      {events.data?.has_more ? (
        <p className="muted">Only the first {events.data.data.length.toLocaleString()} events are shown.</p>
      ) : null}
    </section>
  );
}

type WebhookDelivery = ApiShape<'WebhookDeliveryList'>['data'][number];

/** The webhook deliveries an event caused, each linked to its page with the attempts. */
function WebhookDeliveries({ deliveries }: { deliveries: WebhookDelivery[] }) {
  if (deliveries.length === 0) return null;
  return (
    <ul className="webhook-deliveries">
      {deliveries.map((d) => (
        <li key={d.id}>
          <Link to={`/webhooks/${d.webhook_id}/events/${d.id}`} className="break-anywhere">
            Webhook to {d.endpoint}
          </Link>{' '}
          <StatusBadge status={d.status} />{' '}
          <span className="muted small-text">
            {d.attempts === 1 ? '1 attempt' : `${d.attempts} attempts`}
            {d.next_attempt_at ? (
              <>
                , the next at <Time value={d.next_attempt_at} />
              </>
            ) : null}
          </span>
        </li>
      ))}
    </ul>
  );
}

function EventDetail({ event }: { event: EmailEvent }) {
  const data = event.data as {
    to?: string[];
    bounce?: { message?: string; type?: string; subType?: string };
    click?: { link?: string };
    suppressed?: { message?: string };
    failed?: { reason?: string };
    machine_open?: boolean;
    scanner_click?: boolean;
  };
  const parts: string[] = [];
  if (data.to?.length) parts.push(data.to.join(', '));
  if (data.bounce)
    parts.push(`${data.bounce.type ?? ''} ${data.bounce.subType ?? ''}: ${data.bounce.message ?? ''}`.trim());
  if (data.click?.link) parts.push(`${data.click.link}${data.scanner_click ? ' (a link scanner)' : ''}`);
  if (event.type === 'email.opened')
    parts.push(data.machine_open ? 'by a machine (privacy proxy or scanner)' : 'by a person');
  if (data.suppressed?.message) parts.push(data.suppressed.message);
  if (data.failed?.reason) parts.push(data.failed.reason);
  return <span className="break-anywhere">{parts.join(' · ')}</span>;
}

type Attempt = ApiShape<'EmailAttemptList'>['data'][number];

/**
 * Each delivery attempt, per MX address tried: the host, the address dialled, the TLS, how long it took, and
 * the conversation with the server (our commands and its replies, never the message). Read again whenever
 * the recipients are (`polling` is when they last were).
 */
function Attempts({ email, polling }: { email: Email; polling: number }) {
  const attempts = useQuery({
    queryKey: ['email-attempts', email.id, polling],
    queryFn: () => get<ApiShape<'EmailAttemptList'>>(`/emails/${email.id}/attempts`),
    placeholderData: (previous) => previous,
  });
  if (attempts.error) return <ErrorMessage error={attempts.error} />;
  if (!attempts.data) return null;
  if (attempts.data.data.length === 0) return null;
  return (
    <section aria-labelledby="attempts-title">
      <h3 id="attempts-title">Delivery attempts</h3>
      <ol className="attempts">
        {attempts.data.data.map((a, i) => (
          <AttemptItem key={`${a.attempt}-${a.started_at}-${i}`} attempt={a} />
        ))}
      </ol>
      {attempts.data.has_more ? (
        <p className="muted">Only the first {attempts.data.data.length.toLocaleString()} attempts are shown.</p>
      ) : null}
    </section>
  );
}

function AttemptItem({ attempt: a }: { attempt: Attempt }) {
  // What decided the attempt: its first refusal if there was one (pipelined commands after it get 503s, a
  // RSET's 250 may follow), else the last reply.
  const replies = a.transcript.filter((line) => line.startsWith('S: ') || line.startsWith('* '));
  const last = replies.find((line) => /^S: [45]\d\d/.test(line)) ?? replies.at(-1);
  const title = a.mx ? `Attempt ${a.attempt} to ${a.mx}` : `Attempt ${a.attempt}: MX lookup`;
  return (
    <li className="card attempt">
      <h4 className="break-anywhere">{title}</h4>
      <dl className="facts compact">
        <dt>Started</dt>
        <dd>
          <Time value={a.started_at} /> <span className="muted">({a.duration_ms} ms)</span>
        </dd>
        {a.ip ? (
          <>
            <dt>Address dialled</dt>
            <dd>
              <code>
                {a.ip}:{a.port}
              </code>
            </dd>
          </>
        ) : null}
        {a.mx ? (
          <>
            <dt>TLS</dt>
            <dd>{a.tls ? `${a.tls.version}, ${a.tls.cipher}` : 'None (plaintext)'}</dd>
          </>
        ) : null}
        <dt>Recipients</dt>
        <dd className="break-anywhere">{a.recipients.join(', ')}</dd>
        {last ? (
          <>
            <dt>Server said</dt>
            <dd className="break-anywhere">
              <code>{last.replace(/^(S: |\* )/, '')}</code>
            </dd>
          </>
        ) : null}
      </dl>
      <details>
        <summary>SMTP conversation ({a.transcript.length} lines)</summary>
        <pre className="transcript" tabIndex={0}>
          {a.transcript.join('\n')}
          {a.omitted_lines > 0 ? `\n… ${a.omitted_lines} more lines not kept` : ''}
        </pre>
      </details>
    </li>
  );
}

function RecipientRow({ recipient: r }: { recipient: Recipient }) {
  return (
    <tr>
      <th scope="row" className="break-anywhere">
        {r.address}
      </th>
      <td>
        <StatusBadge status={r.status} />
        {r.bounce_type ? (
          <div className="muted small-text">
            {r.bounce_type}
            {r.bounce_sub_type ? `: ${r.bounce_sub_type}` : ''}
          </div>
        ) : null}
      </td>
      <td>{r.attempts}</td>
      <td className="break-anywhere">
        {r.last_code !== null || r.last_response ? (
          <code>{serverReply(r)}</code>
        ) : (
          <span className="muted">Nothing yet</span>
        )}
      </td>
      <td>
        <Time value={r.updated_at} stacked />
      </td>
    </tr>
  );
}

/** The last reply as the server gave it: its code, then its text (which often repeats the code). */
function serverReply(r: Recipient): string {
  const response = r.last_response ?? '';
  if (r.last_code === null || response.startsWith(String(r.last_code))) return response;
  return `${r.last_code} ${response}`.trim();
}

type Insight = ApiShape<'EmailInsightList'>['data'][number];

const GROUPS: { group: Insight['group']; title: string; allClear: string }[] = [
  {
    group: 'needs_attention',
    title: 'Needs attention',
    allClear: 'Nothing here could keep this email from the inbox.',
  },
  { group: 'could_improve', title: 'Could improve', allClear: 'Nothing to improve.' },
];

/** What in the message or its sending domain could keep it from the inbox, or from reading well, and why. */
function Insights({ email }: { email: Email }) {
  const insights = useQuery({
    queryKey: ['email-insights', email.id],
    queryFn: () => get<ApiShape<'EmailInsightList'>>(`/emails/${email.id}/insights`),
  });
  return (
    <section aria-labelledby="insights-title" className="section">
      <h2 id="insights-title">Insights</h2>
      <ErrorMessage error={insights.error} />
      {insights.data ? (
        <div className="insight-groups">
          {GROUPS.map(({ group, title, allClear }) => {
            const items = insights.data.data.filter((i) => i.group === group);
            const failing = items.filter((i) => !i.passed);
            return (
              <section key={group} aria-label={title} className="card">
                <h3>
                  {title}{' '}
                  <span className="muted small-text">
                    {failing.length === 0 ? 'all clear' : `${failing.length} of ${items.length}`}
                  </span>
                </h3>
                {failing.length === 0 ? <p className="muted">{allClear}</p> : null}
                <ul className="insights">
                  {[...failing, ...items.filter((i) => i.passed)].map((i) => (
                    <li key={i.id} className={i.passed ? 'passed' : 'failing'}>
                      <strong>
                        {i.passed ? 'Passed: ' : group === 'needs_attention' ? 'Fix: ' : 'Consider: '}
                        {i.title}
                      </strong>
                      <p>{i.detail}</p>
                    </li>
                  ))}
                </ul>
              </section>
            );
          })}
        </div>
      ) : insights.isPending ? (
        <Loading />
      ) : null}
    </section>
  );
}

type Tab = 'preview' | 'html' | 'text' | 'delivered';

const CONTENT_TABS: { id: Tab; label: string }[] = [
  { id: 'preview', label: 'Preview' },
  { id: 'html', label: 'HTML' },
  { id: 'text', label: 'Text' },
  { id: 'delivered', label: 'As delivered' },
];

function Content({ email }: { email: Email }) {
  return (
    <section aria-labelledby="content-title" className="section">
      <h2 id="content-title">Content</h2>
      <Tabs
        id="content"
        label="Content"
        tabs={CONTENT_TABS}
        initial={email.html !== null ? 'preview' : 'text'}
        panel={(tab) => <Panel tab={tab} email={email} />}
      />
    </section>
  );
}

function Panel({ tab, email }: { tab: Tab; email: Email }) {
  if (tab === 'preview') return <Preview email={email} />;
  if (tab === 'delivered') return <AsDelivered email={email} />;
  if (tab === 'html') return <PartSource part="HTML" value={email.html} missing="This email has no HTML part." />;
  return (
    <PartSource
      part="text"
      value={email.text}
      missing={
        email.text === null
          ? 'No text was given: the text part is made from the HTML when the email is sent.'
          : 'This email has no text part.'
      }
    />
  );
}

/**
 * The message as the last attempt signed and sent it: its header block, DKIM-Signature first (the body is
 * not kept), with who signed it.
 */
function AsDelivered({ email }: { email: Email }) {
  const attempts = useQuery({
    queryKey: ['email-attempts', email.id, 'as-delivered'],
    queryFn: () => get<ApiShape<'EmailAttemptList'>>(`/emails/${email.id}/attempts`),
  });
  if (attempts.error) return <ErrorMessage error={attempts.error} />;
  if (!attempts.data) return <Loading />;
  const headers = attempts.data.data.findLast((a) => a.message_headers !== null)?.message_headers;
  if (!headers)
    return (
      <p className="muted">
        No message has gone to a mail server yet (a scheduled email, one to sandbox addresses only, or one whose domain
        had no mail server to try).
      </p>
    );
  const signature = /^DKIM-Signature:(.*(?:\r?\n[ \t].*)*)/im.exec(headers)?.[1] ?? '';
  const tag = (name: string) =>
    new RegExp(`(?:^|;)\\s*${name}=([^;]+)`).exec(signature.replace(/\s+/g, ' '))?.[1]?.trim();
  return (
    <>
      <p>
        {signature ? (
          <>
            Signed with DKIM by <strong>{tag('d') ?? '?'}</strong> (selector <code>{tag('s') ?? '?'}</code>, headers{' '}
            <code>{tag('h') ?? '?'}</code>).
          </>
        ) : (
          'Sent without a DKIM signature.'
        )}{' '}
        <span className="muted">
          The header block as sent; the body is not kept (it is the HTML and text, with links rewritten for click
          tracking when it is on).
        </span>
      </p>
      <SourceBlock value={headers} label="Copy the headers" />
    </>
  );
}

/** The preview's share link lives 15 minutes; the page makes another after that. */
const SHARE_LIFE_MS = 14 * 60_000;

/**
 * The email as its recipients see it: its share page (POST /emails/{id}/share, 15 minutes), which the server
 * sandboxes (no scripts, an origin of its own), framed here sandboxed again. Remote images stay off (the
 * page's `images=blocked`) until asked: loading them would tell whoever serves them that it was opened.
 */
export function Preview({ email }: { email: Email }) {
  // One link per visit to the email, never made again behind the reader's back (each is a bearer URL).
  const link = useQuery({
    queryKey: ['email-share', email.id],
    queryFn: () => post<ApiShape<'ShareEmailResponse'>>(`/emails/${email.id}/share`, { expires_in: '15m' }),
    staleTime: SHARE_LIFE_MS,
    gcTime: SHARE_LIFE_MS,
    retry: false,
    refetchOnWindowFocus: false,
  });
  if (link.error) return <ErrorMessage error={link.error} />;
  if (!link.data) return <Loading label="Preparing the preview…" />;
  return <EmailFrame src={link.data.url} title="Preview of the email" />;
}

const SHARE_LIVES = [
  { value: '1h', label: 'One hour' },
  { value: '1 day', label: 'One day' },
  { value: '48 hours', label: 'Two days (the longest)' },
];

/** A link anyone can open to read the email as its recipients do, for as long as chosen (48 h at most). */
function ShareEmail({ email }: { email: Email }) {
  const [open, setOpen] = useState(false);
  const [made, setMade] = useState<{ url: string; life: string } | null>(null);
  // The form's button goes when the link comes: focus moves to the link, not back to the page.
  const shown = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (made) shown.current?.focus();
  }, [made]);
  const close = () => {
    setOpen(false);
    setMade(null);
  };
  const share = async (data: FormData) => {
    const life = text(data, 'expires_in');
    const link = await post<ApiShape<'ShareEmailResponse'>>(`/emails/${email.id}/share`, { expires_in: life });
    setMade({ url: link.url, life: SHARE_LIVES.find((l) => l.value === life)?.label.toLowerCase() ?? life });
  };
  return (
    <>
      <button type="button" className="button" onClick={() => setOpen(true)}>
        Share
      </button>
      <Dialog open={open} title={made ? 'Share link made' : 'Share the email'} onClose={close}>
        {made ? (
          <div ref={shown} tabIndex={-1}>
            <Notice>
              Anyone with this link can read the email (without its attachments) for {made.life}. It is shown once.
            </Notice>
            <CodeValue value={made.url} label="Copy the share link" />
            <div className="actions">
              <button type="button" className="button primary" onClick={close}>
                Done
              </button>
            </div>
          </div>
        ) : (
          <ActionForm action={share} submitLabel="Make the link" label="Share the email" onCancel={close}>
            <Field label="The link works for">
              {(p) => (
                <select {...p} name="expires_in" defaultValue={SHARE_LIVES[0]!.value}>
                  {SHARE_LIVES.map((l) => (
                    <option key={l.value} value={l.value}>
                      {l.label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </ActionForm>
        )}
      </Dialog>
    </>
  );
}

function Reschedule({ email }: { email: Email }) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const save = async (data: FormData) => {
    const at = fromLocalInput(text(data, 'scheduled_at'));
    if (!at) throw new Error('Pick a date and time.');
    await patch(`/emails/${email.id}`, { scheduled_at: at });
    await client.invalidateQueries({ queryKey: [EMAIL, email.id] });
    await client.invalidateQueries({ queryKey: [EMAILS] });
    setOpen(false);
  };
  return (
    <>
      <button type="button" className="button" onClick={() => setOpen(true)}>
        Reschedule
      </button>
      <Dialog open={open} title="Reschedule the email" onClose={() => setOpen(false)}>
        <ActionForm action={save} submitLabel="Reschedule" label="Reschedule the email" onCancel={() => setOpen(false)}>
          <Field label="Send at" hint="In your time zone.">
            {(p) => (
              <input
                {...p}
                name="scheduled_at"
                type="datetime-local"
                required
                defaultValue={toLocalInput(email.scheduled_at ?? undefined)}
              />
            )}
          </Field>
        </ActionForm>
      </Dialog>
    </>
  );
}

function CancelScheduled({ email }: { email: Email }) {
  const client = useQueryClient();
  return (
    <ConfirmButton
      label="Cancel email"
      accessibleName="Cancel the email"
      title="Cancel the email?"
      confirmLabel="Cancel the email"
      onConfirm={async () => {
        await post(`/emails/${email.id}/cancel`);
        await client.invalidateQueries({ queryKey: [EMAIL, email.id] });
        await client.invalidateQueries({ queryKey: [EMAILS] });
      }}
    >
      <p>It is not sent. This cannot be undone: send it again to have it delivered.</p>
    </ConfirmButton>
  );
}
