// The team's sent and scheduled emails (GET /emails), newest first, filtered by last event, sender, recipient,
// subject words, sending domain and time (kept in the URL), each opening its page.
import { useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { download, get, type Query } from '../../api/client.ts';
import { useApiKeyNames } from '../../api/people.ts';
import { EmptyState, ErrorMessage, StatusBadge } from '../../ui/feedback.tsx';
import { Field, LateSelect, text } from '../../ui/form.tsx';
import { FilterForm, ListTable, Pager, useFilters, useListPage } from '../../ui/list.tsx';
import { fromLocalInput, Time, toLocalInput } from '../../ui/time.tsx';
import { useIsAdmin } from '../../session.tsx';
import { RetentionNote } from '../../ui/retention.tsx';

type EmailItem = ApiShape<'EmailList'>['data'][number];

export const EMAILS = 'emails';

const FILTER_NAMES = [
  'last_event',
  'from',
  'to',
  'subject',
  'tag',
  'domain_id',
  'api_key_id',
  'created_after',
  'created_before',
  'broadcast_id',
] as const;

type LastEvent = NonNullable<ApiRequest<'EmailFilterQuery'>['last_event']>;

/** Every last event the filter offers, as the page names it (a Record, so none can be left out). */
const LAST_EVENTS: Record<LastEvent, string> = {
  queued: 'Queued',
  scheduled: 'Scheduled',
  canceled: 'Canceled',
  sent: 'Sent',
  delivered: 'Delivered',
  delivery_delayed: 'Delivery delayed',
  bounced: 'Bounced',
  failed: 'Failed',
  suppressed: 'Suppressed',
  complained: 'Complained',
  opened: 'Opened',
  clicked: 'Clicked',
};

/** The recipients of a list row: the first, and how many more. */
function recipients(email: EmailItem): string {
  const all = [...email.to, ...(email.cc ?? []), ...(email.bcc ?? [])];
  return all.length > 1 ? `${all[0]} and ${all.length - 1} more` : (all[0] ?? '');
}

export function EmailList() {
  const [filters] = useFilters();
  const query = Object.fromEntries(FILTER_NAMES.map((name) => [name, filters[name]]));
  const page = useListPage<EmailItem>(EMAILS, '/emails', query);
  const filtered = FILTER_NAMES.some((name) => filters[name]);
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Emails</h1>
          <p className="muted">
            Every email this team sent or scheduled, with what happened to it last.
            <RetentionNote what="Emails" />
          </p>
        </div>
        <ExportCsv query={query} />
      </div>
      <EmailFilters />
      <ListTable
        query={page}
        caption="Emails"
        columns={['Subject', 'To', 'Last event', 'From', 'Created']}
        empty={
          <EmptyState title={filtered ? 'No email matches these filters' : 'No emails yet'}>
            <p>
              {filtered
                ? 'Widen the time range or clear the filters.'
                : 'Emails sent with the API, the SMTP relay or a broadcast are listed here.'}
            </p>
          </EmptyState>
        }
        row={(email) => (
          <tr key={email.id}>
            <th scope="row" className="break-anywhere">
              <Link to={`/emails/${email.id}`}>{email.subject || '(no subject)'}</Link>
            </th>
            <td className="break-anywhere">{recipients(email)}</td>
            <td>
              <StatusBadge status={email.last_event} />
              {email.scheduled_at && email.last_event === 'scheduled' ? (
                <div className="muted small-text">
                  for <Time value={email.scheduled_at} />
                </div>
              ) : null}
            </td>
            <td className="break-anywhere">{email.from}</td>
            <td>
              <Time value={email.created_at} stacked />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

/** Every email the filters select (not only this page), as CSV, streamed by the API. */
function ExportCsv({ query }: { query: Query }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      await download('/emails/export', query, 'emails.csv');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      <button type="button" className="button" disabled={busy} onClick={() => void save()}>
        {busy ? 'Exporting…' : 'Export CSV'}
      </button>
      <ErrorMessage error={error} />
    </div>
  );
}

function EmailFilters() {
  const [filters] = useFilters();
  const domains = useQuery({
    queryKey: ['domains', 'all'],
    queryFn: () => get<ApiShape<'DomainList'>>('/domains', { limit: 100 }),
  });
  // The team's keys are listed to admins; a member filters by the key a link or the URL names.
  const admin = useIsAdmin();
  const keys = useApiKeyNames({ enabled: admin });
  const read = (data: FormData) => ({
    last_event: text(data, 'last_event'),
    from: text(data, 'from'),
    to: text(data, 'to'),
    subject: text(data, 'subject'),
    tag: text(data, 'tag'),
    domain_id: text(data, 'domain_id'),
    api_key_id: text(data, 'api_key_id'),
    created_after: fromLocalInput(text(data, 'created_after')),
    created_before: fromLocalInput(text(data, 'created_before')),
    // A broadcast's page links here with its id; kept until cleared.
    broadcast_id: filters.broadcast_id ?? '',
  });
  return (
    <FilterForm label="Filter the emails" read={read}>
      <Field label="Last event">
        {(p) => (
          <select {...p} name="last_event" defaultValue={filters.last_event ?? ''}>
            <option value="">Any</option>
            {Object.entries(LAST_EVENTS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="To" hint="A recipient’s address, in to, cc or bcc.">
        {(p) => <input {...p} name="to" type="email" defaultValue={filters.to ?? ''} autoComplete="off" />}
      </Field>
      <Field label="From" hint="The sender’s address.">
        {(p) => <input {...p} name="from" type="email" defaultValue={filters.from ?? ''} autoComplete="off" />}
      </Field>
      <Field label="Subject" hint="Any part of it.">
        {(p) => <input {...p} name="subject" defaultValue={filters.subject ?? ''} autoComplete="off" />}
      </Field>
      <Field label="Tag" hint="name=value, or a name for any value.">
        {(p) => <input {...p} name="tag" defaultValue={filters.tag ?? ''} autoComplete="off" />}
      </Field>
      <Field label="Sending domain">
        {(p) => (
          <LateSelect
            {...p}
            name="domain_id"
            initial={filters.domain_id ?? ''}
            anyLabel="Any"
            options={(domains.data?.data ?? []).map((d) => ({ value: d.id, label: d.name }))}
          />
        )}
      </Field>
      <Field label="API key">
        {(p) => (
          <LateSelect
            {...p}
            name="api_key_id"
            initial={filters.api_key_id ?? ''}
            anyLabel="Any"
            options={(keys.data?.data ?? []).map((k) => ({ value: k.id, label: k.name }))}
          />
        )}
      </Field>
      <Field label="Created from">
        {(p) => (
          <input {...p} name="created_after" type="datetime-local" defaultValue={toLocalInput(filters.created_after)} />
        )}
      </Field>
      <Field label="Created until">
        {(p) => (
          <input
            {...p}
            name="created_before"
            type="datetime-local"
            defaultValue={toLocalInput(filters.created_before)}
          />
        )}
      </Field>
      {filters.broadcast_id ? (
        <p className="hint">
          Only the emails of broadcast <code>{filters.broadcast_id}</code>.
        </p>
      ) : null}
    </FilterForm>
  );
}
