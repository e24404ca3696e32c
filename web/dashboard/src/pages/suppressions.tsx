// Suppressions: the addresses this team's email is no longer sent to, why (a bounce, a complaint, or added by
// hand) and since when; filtered by reason in the URL; an address looked up; addresses added (one or up to
// 100 at once) and removed, after a confirmation, so that mail goes to them again.
import { Fragment, useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { ApiError, del, get, post } from '../api/client.ts';
import { ConfirmButton, Dialog } from '../ui/dialog.tsx';
import { EmptyState, ErrorMessage, Notice, StatusBadge } from '../ui/feedback.tsx';
import { ActionForm, Field, text } from '../ui/form.tsx';
import { FilterForm, ListTable, Pager, useFilters, useListPage } from '../ui/list.tsx';
import { Time } from '../ui/time.tsx';

type Suppression = ApiShape<'SuppressionList'>['data'][number];

const SUPPRESSIONS = 'suppressions';

/** Each reason as the page names it, with what put the address on the list. */
const ORIGINS: { value: Suppression['origin']; label: string; why: string }[] = [
  { value: 'bounce', label: 'Bounce', why: 'The receiving server refused the address for good, or again and again.' },
  { value: 'complaint', label: 'Complaint', why: 'The recipient marked an email as spam.' },
  { value: 'manual', label: 'Added by hand', why: 'Someone on the team, or a program through the API, added it.' },
];

export default function Suppressions() {
  const [filters] = useFilters();
  const page = useListPage<Suppression>(SUPPRESSIONS, '/suppressions', { origin: filters.origin });
  const filtered = Boolean(filters.origin);
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Suppressions</h1>
          <p className="muted">
            Email to these addresses is not sent: the send is accepted and the recipient is marked suppressed.
          </p>
        </div>
        <AddSuppressions />
      </div>
      <FilterForm label="Filter the suppressions" read={(data) => ({ origin: text(data, 'origin') })}>
        <Field label="Reason">
          {(p) => (
            <select {...p} name="origin" defaultValue={filters.origin ?? ''}>
              <option value="">Any</option>
              {ORIGINS.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </FilterForm>
      <FindAddress />
      <ListTable
        query={page}
        caption="Suppressions"
        columns={['Address', 'Reason', 'Because of', 'Since']}
        actions
        empty={
          <EmptyState title={filtered ? 'No suppression for this reason' : 'No suppressed addresses'}>
            <p>
              {filtered
                ? 'Try another reason, or clear the filter.'
                : 'An address lands here when it bounces for good or its recipient complains, or when you add it.'}
            </p>
          </EmptyState>
        }
        row={(s) => (
          <tr key={s.id}>
            <th scope="row" className="break-anywhere">
              {s.email}
            </th>
            <td>
              <Reason origin={s.origin} />
            </td>
            <td>
              <Source suppression={s} />
            </td>
            <td>
              <Time value={s.created_at} stacked />
            </td>
            <td className="row-actions">
              <RemoveSuppression suppression={s} />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
      <section aria-labelledby="reasons-title" className="section">
        <h2 id="reasons-title">Why an address is here</h2>
        <dl className="facts card">
          {ORIGINS.map((o) => (
            <Fragment key={o.value}>
              <dt>{o.label}</dt>
              <dd>{o.why}</dd>
            </Fragment>
          ))}
        </dl>
      </section>
    </>
  );
}

function Reason({ origin }: { origin: Suppression['origin'] }) {
  return <StatusBadge status={ORIGINS.find((o) => o.value === origin)?.label.toLowerCase() ?? origin} />;
}

/** What caused the entry: the email that bounced or was complained about, when there is one. */
function Source({ suppression }: { suppression: Suppression }) {
  if (!suppression.source_id) return <span className="muted">—</span>;
  if (suppression.origin === 'manual') return <code>{suppression.source_id}</code>;
  return <span title="The email whose bounce or complaint added the address">Email {suppression.source_id}</span>;
}

/** Looks one address up (GET /suppressions/{address}): whether it is suppressed, why and since when. */
function FindAddress() {
  const [result, setResult] = useState<{ email: string; found: Suppression | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const find = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const email = text(new FormData(event.currentTarget), 'email');
    setError(null);
    setResult(null);
    if (!email) return;
    try {
      setResult({ email, found: await get<Suppression>(`/suppressions/${encodeURIComponent(email)}`) });
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 404) setResult({ email, found: null });
      else setError(err);
    }
  };
  return (
    <section aria-labelledby="find-title" className="section">
      <h2 id="find-title" className="visually-hidden">
        Find an address
      </h2>
      <form className="inline-form" aria-label="Find an address" onSubmit={(e) => void find(e)}>
        <Field label="Is this address suppressed?">
          {(p) => <input {...p} name="email" type="email" placeholder="someone@example.com" autoComplete="off" />}
        </Field>
        <button type="submit" className="button">
          Look up
        </button>
      </form>
      <ErrorMessage error={error} />
      <div role="status" className="lookup-result">
        {result ? (
          result.found ? (
            <div>
              <strong>{result.email}</strong> is suppressed: <Reason origin={result.found.origin} /> since{' '}
              <Time value={result.found.created_at} />.{' '}
              <RemoveSuppression
                suppression={result.found}
                onRemoved={() => setResult({ email: result.email, found: null })}
              />
            </div>
          ) : (
            <p>
              <strong>{result.email}</strong> is not suppressed: email to it is sent.
            </p>
          )
        ) : null}
      </div>
    </section>
  );
}

/** Addresses from a text box: one per line, or separated by commas or spaces. */
function addressesOf(value: string): string[] {
  return [...new Set(value.split(/[\s,;]+/).filter(Boolean))];
}

function AddSuppressions() {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const [added, setAdded] = useState<number | null>(null);
  const close = () => {
    setOpen(false);
    setAdded(null);
  };
  const add = async (data: FormData) => {
    const emails = addressesOf(text(data, 'emails'));
    if (emails.length === 0) throw new Error('Enter at least one address.');
    if (emails.length > 100) throw new Error(`Up to 100 addresses at once: this is ${emails.length}.`);
    if (emails.length === 1) await post('/suppressions', { email: emails[0] });
    else await post('/suppressions/batch/add', { emails });
    await client.invalidateQueries({ queryKey: [SUPPRESSIONS] });
    setAdded(emails.length);
  };
  return (
    <>
      <button type="button" className="button primary" onClick={() => setOpen(true)}>
        Add addresses
      </button>
      <Dialog open={open} title="Suppress addresses" onClose={close}>
        {added !== null ? (
          <>
            <Notice tone="success">
              {added === 1 ? 'The address is' : `${added} addresses are`} suppressed: email to{' '}
              {added === 1 ? 'it' : 'them'} is no longer sent.
            </Notice>
            <div className="actions">
              <button type="button" className="button primary" onClick={close}>
                Done
              </button>
            </div>
          </>
        ) : (
          <ActionForm action={add} submitLabel="Suppress" label="Suppress addresses" onCancel={close}>
            <Field label="Addresses" hint="One per line, up to 100. An address already suppressed stays as it is.">
              {(p) => <textarea {...p} name="emails" rows={5} required autoComplete="off" spellCheck={false} />}
            </Field>
          </ActionForm>
        )}
      </Dialog>
    </>
  );
}

function RemoveSuppression({ suppression, onRemoved }: { suppression: Suppression; onRemoved?: () => void }) {
  const client = useQueryClient();
  return (
    <ConfirmButton
      label="Remove"
      accessibleName={`Remove ${suppression.email}`}
      title={`Remove ${suppression.email}?`}
      confirmLabel="Remove suppression"
      onConfirm={async () => {
        await del(`/suppressions/${suppression.id}`);
        await client.invalidateQueries({ queryKey: [SUPPRESSIONS] });
        onRemoved?.();
      }}
    >
      <p>
        Email to {suppression.email} is sent again.{' '}
        {suppression.origin === 'manual'
          ? ''
          : 'If it still bounces, or its recipient complains again, it comes back to this list.'}
      </p>
    </ConfirmButton>
  );
}
