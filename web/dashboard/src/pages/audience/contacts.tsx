// The team's contacts, newest first: a search by a part of the email or name, and filters by segment and by
// subscription (to every broadcast, or to one topic), all kept in the URL; each contact's page a click away; a contact added by hand.
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { post } from '../../api/client.ts';
import { Dialog } from '../../ui/dialog.tsx';
import { Badge, EmptyState } from '../../ui/feedback.tsx';
import { ActionForm, Field, LateSelect, text } from '../../ui/form.tsx';
import { FilterForm, ListTable, Pager, useFilters, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { CONTACTS, useSegments, useTopics } from './queries.ts';

type ContactItem = ApiShape<'ContactList'>['data'][number];

export function Contacts() {
  const [filters] = useFilters();
  const page = useListPage<ContactItem>(CONTACTS, '/contacts', {
    q: filters.q,
    segment_id: filters.segment_id,
    unsubscribed: filters.unsubscribed,
    topic_id: filters.topic_id,
    topic_subscription: filters.topic_subscription,
  });
  const segments = useSegments();
  const topics = useTopics();
  const filtered = Boolean(filters.q || filters.segment_id || filters.unsubscribed || filters.topic_id);
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Contacts</h1>
          <p className="muted">The people broadcasts go to, with their properties, segments and topic choices.</p>
        </div>
        <AddContact />
      </div>
      <FilterForm
        label="Filter the contacts"
        read={(data) => ({
          q: text(data, 'q'),
          segment_id: text(data, 'segment_id'),
          unsubscribed: text(data, 'unsubscribed'),
          ...topicFilter(text(data, 'topic')),
        })}
      >
        <Field label="Email or name">
          {(p) => <input {...p} name="q" type="search" defaultValue={filters.q ?? ''} />}
        </Field>
        <Field label="Segment">
          {(p) => (
            <LateSelect
              {...p}
              name="segment_id"
              initial={filters.segment_id ?? ''}
              anyLabel="Any"
              options={(segments.data?.data ?? []).map((s) => ({ value: s.id, label: s.name }))}
            />
          )}
        </Field>
        <Field label="Subscription">
          {(p) => (
            <select {...p} name="unsubscribed" defaultValue={filters.unsubscribed ?? ''}>
              <option value="">Any</option>
              <option value="false">Subscribed</option>
              <option value="true">Unsubscribed</option>
            </select>
          )}
        </Field>
        <Field label="Topic">
          {(p) => (
            <LateSelect
              {...p}
              name="topic"
              initial={filters.topic_id ? `${filters.topic_id}:${filters.topic_subscription ?? 'opt_in'}` : ''}
              anyLabel="Any"
              options={(topics.data?.data ?? []).flatMap((t) => [
                { value: `${t.id}:opt_in`, label: `${t.name}: subscribed` },
                { value: `${t.id}:opt_out`, label: `${t.name}: opted out` },
              ])}
            />
          )}
        </Field>
      </FilterForm>
      <ListTable
        query={page}
        caption="Contacts"
        columns={['Email', 'Name', 'Subscription', 'Added']}
        empty={
          <EmptyState title={filtered ? 'No contact matches' : 'No contacts yet'}>
            <p>
              {filtered
                ? 'Try another search or filter, or clear them.'
                : 'Add a contact here, import a CSV (Imports), or create them with POST /contacts.'}
            </p>
          </EmptyState>
        }
        row={(c) => (
          <tr key={c.id}>
            <th scope="row" className="break-anywhere">
              <Link to={`/audience/contacts/${c.id}`}>{c.email}</Link>
            </th>
            <td>{[c.first_name, c.last_name].filter(Boolean).join(' ') || <span className="muted">—</span>}</td>
            <td>{c.unsubscribed ? <Badge tone="warn">unsubscribed</Badge> : <Badge tone="good">subscribed</Badge>}</td>
            <td>
              <Time value={c.created_at} stacked />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

/** The Topic field's value (`<topic id>:<subscription>`) as the list's two parameters. */
function topicFilter(value: string): { topic_id: string; topic_subscription: string } {
  const [id = '', subscription = ''] = value.split(':');
  return { topic_id: id, topic_subscription: id ? subscription : '' };
}

function AddContact() {
  const [open, setOpen] = useState(false);
  const client = useQueryClient();
  const navigate = useNavigate();
  const add = async (data: FormData) => {
    const body: ApiRequest<'CreateContactBody'> = {
      email: text(data, 'email'),
      first_name: text(data, 'first_name') || null,
      last_name: text(data, 'last_name') || null,
    };
    const { id } = await post<{ id: string }>('/contacts', body);
    await client.invalidateQueries({ queryKey: [CONTACTS] });
    setOpen(false);
    await navigate(`/audience/contacts/${id}`);
  };
  return (
    <>
      <button type="button" className="button primary" onClick={() => setOpen(true)}>
        Add a contact
      </button>
      <Dialog open={open} title="Add a contact" onClose={() => setOpen(false)}>
        <ActionForm action={add} submitLabel="Add" label="Add a contact" onCancel={() => setOpen(false)}>
          <Field label="Email">{(p) => <input {...p} name="email" type="email" required />}</Field>
          <Field label="First name">{(p) => <input {...p} name="first_name" autoComplete="off" />}</Field>
          <Field label="Last name">{(p) => <input {...p} name="last_name" autoComplete="off" />}</Field>
        </ActionForm>
      </Dialog>
    </>
  );
}
