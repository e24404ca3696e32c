// One broadcast's page, by its status: a draft's composer, preview as a contact, test and review (errors
// block sending; warnings are shown), then send now or schedule; a member's broadcast awaiting approval
// (admins approve or reject it); a scheduled one (cancel); and, once it goes, its results.
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { get, post } from '../../api/client.ts';
import { useIsAdmin, useSession } from '../../session.tsx';
import { HtmlPreview } from '../../ui/html-preview.tsx';
import { Dialog } from '../../ui/dialog.tsx';
import { Badge, ErrorMessage, Loading, Notice, StatusBadge } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { formatTime, fromLocalInput } from '../../ui/time.tsx';
import { Composer } from './composer.tsx';
import { Results } from './results.tsx';
import { BROADCASTS, STATUS_LABELS, useBroadcast, useReview, type Broadcast } from './queries.ts';

export function BroadcastPage() {
  const { id = '' } = useParams();
  const broadcast = useBroadcast(id);
  if (broadcast.isPending) return <Loading />;
  if (!broadcast.data) return <ErrorMessage error={broadcast.error} />;
  const b = broadcast.data;
  return (
    <>
      <p>
        <Link to="/broadcasts">All broadcasts</Link>
      </p>
      <div className="page-header">
        <div>
          <h1 className="break-anywhere">{b.name || 'Untitled broadcast'}</h1>
          <StatusBadge status={STATUS_LABELS[b.status].toLowerCase()} />
        </div>
      </div>
      <Body key={`${b.id}-${b.status}`} broadcast={b} />
    </>
  );
}

function Body({ broadcast: b }: { broadcast: Broadcast }) {
  switch (b.status) {
    case 'draft':
      return (
        <>
          {b.rejection ? (
            <Notice tone="warning">An admin sent it back{b.rejection.reason ? `: ${b.rejection.reason}` : '.'}</Notice>
          ) : null}
          <Composer broadcast={b} />
          <Preview broadcast={b} />
          <ReviewAndSend broadcast={b} />
        </>
      );
    case 'awaiting_approval':
      return (
        <>
          <Approval broadcast={b} />
          <Preview broadcast={b} />
        </>
      );
    case 'scheduled':
      return (
        <>
          <Notice>
            It is scheduled for {b.scheduled_at ? formatTime(b.scheduled_at) : 'later'}.{' '}
            <CancelButton broadcast={b} label="Cancel the schedule" />
          </Notice>
          <Preview broadcast={b} />
        </>
      );
    case 'queued':
    case 'sent':
    case 'canceled':
      return <Results broadcast={b} />;
  }
}

type Contact = ApiShape<'ContactList'>['data'][number];

/** The broadcast as a contact of its segment gets it, in a sandboxed frame; and a test copy to oneself. */
function Preview({ broadcast: b }: { broadcast: Broadcast }) {
  const session = useSession();
  const [contactId, setContactId] = useState('');
  const contacts = useQuery({
    queryKey: ['contacts', 'segment', b.segment_id],
    queryFn: () => get<ApiShape<'ContactList'>>('/contacts', { segment_id: b.segment_id, limit: 50 }),
    enabled: b.segment_id !== null,
  });
  const chosen = contactId || contacts.data?.data[0]?.id || '';
  const preview = useQuery({
    queryKey: [BROADCASTS, 'preview', b.id, chosen, b.subject, b.html],
    queryFn: () => get<ApiShape<'BroadcastPreview'>>(`/broadcasts/${b.id}/preview`, { contact_id: chosen }),
    enabled: chosen !== '',
  });
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const me = session.user?.email;
  return (
    <section aria-labelledby="preview-heading" className="card">
      <h2 id="preview-heading">Preview</h2>
      {b.segment_id === null ? <p className="muted">Choose a segment to preview it as one of its contacts.</p> : null}
      <ErrorMessage error={contacts.error} />
      {contacts.data && contacts.data.data.length === 0 ? (
        <p className="muted">The segment has no contacts yet.</p>
      ) : null}
      {contacts.data && contacts.data.data.length > 0 ? (
        <div className="field">
          <label htmlFor="preview-contact">Preview as</label>
          <select id="preview-contact" value={chosen} onChange={(e) => setContactId(e.target.value)}>
            {contacts.data.data.map((c: Contact) => (
              <option key={c.id} value={c.id}>
                {c.first_name || c.last_name
                  ? `${c.first_name ?? ''} ${c.last_name ?? ''}`.trim() + ` <${c.email}>`
                  : c.email}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <ErrorMessage error={preview.error} />
      {preview.data ? (
        <>
          <p>
            <strong>Subject:</strong> <span className="break-anywhere">{preview.data.subject}</span>
          </p>
          <HtmlPreview
            className="preview"
            title={`The broadcast as ${preview.data.email} gets it`}
            html={preview.data.html ?? `<pre>${escape(preview.data.text ?? '')}</pre>`}
          />
        </>
      ) : null}
      {me ? (
        <div className="actions">
          <button
            type="button"
            className="button"
            onClick={() => {
              setError(null);
              setSentTo(null);
              post(`/broadcasts/${b.id}/test`, {
                to: [me],
                contact_id: chosen || null,
              } satisfies ApiRequest<'BroadcastTestBody'>).then(
                () => setSentTo(me),
                (err: unknown) => setError(err),
              );
            }}
          >
            Send a test to me
          </button>
        </div>
      ) : null}
      <ErrorMessage error={error} />
      {sentTo ? <Notice tone="success">A test copy is on its way to {sentTo}.</Notice> : null}
    </section>
  );
}

function escape(value: string): string {
  return value.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c] ?? c);
}

const LEVEL_TONES = { error: 'bad', warning: 'warn', ok: 'good' } as const;
const LEVEL_LABELS = { error: 'Error', warning: 'Warning', ok: 'OK' } as const;

/** The review's checks (errors first), the contacts it will reach, then Send now or Schedule. */
function ReviewAndSend({ broadcast: b }: { broadcast: Broadcast }) {
  const review = useReview(b.id);
  const client = useQueryClient();
  const [when, setWhen] = useState('');
  const [outcome, setOutcome] = useState<string | null>(null);
  const send = async (scheduledAt?: string) => {
    const body: ApiRequest<'SendBroadcastBody'> = scheduledAt ? { scheduled_at: scheduledAt } : {};
    await post(`/broadcasts/${b.id}/send`, body);
    await client.invalidateQueries({ queryKey: [BROADCASTS] });
    const now = await get<Broadcast>(`/broadcasts/${b.id}`);
    if (now.status === 'awaiting_approval') setOutcome('It now waits for an admin’s approval.');
  };
  const order = { error: 0, warning: 1, ok: 2 } as const;
  const checks = [...(review.data?.checks ?? [])].sort((x, y) => order[x.level] - order[y.level]);
  const errors = checks.filter((c) => c.level === 'error').length;
  return (
    <section aria-labelledby="review-heading" className="card">
      <h2 id="review-heading">Review</h2>
      <div className="actions">
        <button type="button" className="button small" onClick={() => void review.refetch()}>
          Review again
        </button>
      </div>
      <ErrorMessage error={review.error} />
      {review.isFetching ? <Loading label="Reviewing…" /> : null}
      {review.data ? (
        <>
          <p>
            <strong>{review.data.recipients}</strong> {review.data.recipients === 1 ? 'contact' : 'contacts'} will
            receive it (after unsubscribes and topic opt-outs).
          </p>
          {errors > 0 ? (
            <Notice tone="warning">
              {errors === 1 ? 'One error blocks' : `${errors} errors block`} sending: fix {errors === 1 ? 'it' : 'them'}{' '}
              and save the draft.
            </Notice>
          ) : null}
          <ul className="review-checks" aria-label="Review checks">
            {checks.map((c) => (
              <li key={c.check}>
                <Badge tone={LEVEL_TONES[c.level]}>{LEVEL_LABELS[c.level]}</Badge> {c.message}
              </li>
            ))}
          </ul>
          <SendForms disabled={!review.data.can_send || review.isFetching} when={when} setWhen={setWhen} send={send} />
          {outcome ? <Notice tone="success">{outcome}</Notice> : null}
        </>
      ) : null}
    </section>
  );
}

function SendForms({
  disabled,
  when,
  setWhen,
  send,
}: {
  disabled: boolean;
  when: string;
  setWhen: (value: string) => void;
  send: (scheduledAt?: string) => Promise<void>;
}) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = (scheduledAt?: string) => {
    setBusy(true);
    setError(null);
    send(scheduledAt)
      .catch((err: unknown) => setError(err))
      .finally(() => setBusy(false));
  };
  return (
    <>
      <div className="actions">
        <button type="button" className="button primary" disabled={disabled || busy} onClick={() => run()}>
          Send now
        </button>
      </div>
      <div className="filters">
        <div className="field">
          <label htmlFor="schedule-at">Send at</label>
          <input id="schedule-at" type="datetime-local" value={when} onChange={(e) => setWhen(e.target.value)} />
        </div>
        <div className="actions">
          <button
            type="button"
            className="button"
            disabled={disabled || busy || !when}
            onClick={() => run(fromLocalInput(when))}
          >
            Schedule
          </button>
        </div>
      </div>
      <ErrorMessage error={error} />
    </>
  );
}

/** A broadcast waiting for approval: admins approve or reject it; members see that it waits. */
function Approval({ broadcast: b }: { broadcast: Broadcast }) {
  const isAdmin = useIsAdmin();
  const client = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const [rejecting, setRejecting] = useState(false);
  const when = b.approval?.scheduled_at
    ? `for ${formatTime(b.approval.scheduled_at)}`
    : 'to go as soon as it is approved';
  const done = () => client.invalidateQueries({ queryKey: [BROADCASTS] });
  if (!isAdmin) {
    return (
      <Notice>
        It waits for an admin&apos;s approval ({when}). <CancelButton broadcast={b} label="Withdraw the request" />
      </Notice>
    );
  }
  return (
    <section aria-labelledby="approval-heading" className="card">
      <h2 id="approval-heading">Approval</h2>
      <p>A member asked to send it {when}. Review it, then approve or reject it.</p>
      <ReviewSummary id={b.id} />
      <div className="actions">
        <button
          type="button"
          className="button primary"
          onClick={() => {
            setError(null);
            post(`/broadcasts/${b.id}/approve`).then(done, (err: unknown) => setError(err));
          }}
        >
          Approve
        </button>
        <button type="button" className="button" onClick={() => setRejecting(true)}>
          Reject
        </button>
      </div>
      <ErrorMessage error={error} />
      <Dialog open={rejecting} title="Reject the broadcast" onClose={() => setRejecting(false)}>
        <ActionForm
          label="Reject the broadcast"
          submitLabel="Reject"
          onCancel={() => setRejecting(false)}
          action={async (data) => {
            await post(`/broadcasts/${b.id}/reject`, {
              reason: text(data, 'reason') || null,
            } satisfies ApiRequest<'RejectBroadcastBody'>);
            setRejecting(false);
            await done();
          }}
        >
          <Field label="Reason" hint="The member sees it on the draft.">
            {(p) => <textarea {...p} name="reason" rows={3} maxLength={1000} />}
          </Field>
        </ActionForm>
      </Dialog>
    </section>
  );
}

function ReviewSummary({ id }: { id: string }) {
  const review = useReview(id);
  if (!review.data) return <ErrorMessage error={review.error} />;
  const problems = review.data.checks.filter((c) => c.level !== 'ok');
  return (
    <>
      <p>
        <strong>{review.data.recipients}</strong> {review.data.recipients === 1 ? 'contact' : 'contacts'} will receive
        it.
      </p>
      {problems.length > 0 ? (
        <ul className="review-checks" aria-label="Review checks">
          {problems.map((c) => (
            <li key={c.check}>
              <Badge tone={LEVEL_TONES[c.level]}>{LEVEL_LABELS[c.level]}</Badge> {c.message}
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

function CancelButton({ broadcast: b, label }: { broadcast: Broadcast; label: string }) {
  const client = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      <button
        type="button"
        className="button small"
        onClick={() => {
          setError(null);
          post(`/broadcasts/${b.id}/cancel`).then(
            () => client.invalidateQueries({ queryKey: [BROADCASTS] }),
            (err: unknown) => setError(err),
          );
        }}
      >
        {label}
      </button>
      <ErrorMessage error={error} />
    </>
  );
}
