// One contact: its fields and properties (edited in one form), its segments (added, removed), its choice for
// each topic, the emails it received with their last event, and deleting it.
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { ApiError, del, get, patch, post } from '../../api/client.ts';
import { CodeValue } from '../../ui/copy.tsx';
import { ConfirmButton } from '../../ui/dialog.tsx';
import { Badge, ErrorMessage, Loading, Notice, StatusBadge } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { Time } from '../../ui/time.tsx';
import { CONTACTS, useProperties, useSegments, type Property } from './queries.ts';

type Contact = ApiShape<'Contact'>;

export function ContactPage() {
  const { id = '' } = useParams();
  const contact = useQuery({
    queryKey: [CONTACTS, 'one', id],
    queryFn: () => get<Contact>(`/contacts/${encodeURIComponent(id)}`),
  });
  if (contact.error) {
    const gone = contact.error instanceof ApiError && contact.error.statusCode === 404;
    return (
      <>
        <h1>{gone ? 'Contact not found' : 'Contact'}</h1>
        <ErrorMessage error={contact.error} />
        <Link to="/audience">Back to contacts</Link>
      </>
    );
  }
  if (!contact.data) return <Loading />;
  // Keyed: the forms' fields start from this contact's values, not another's.
  return <ContactView key={contact.data.id} contact={contact.data} />;
}

function ContactView({ contact }: { contact: Contact }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const remove = async () => {
    await del(`/contacts/${contact.id}`);
    client.removeQueries({ queryKey: [CONTACTS, 'one', contact.id] });
    await navigate('/audience');
    await client.invalidateQueries({ queryKey: [CONTACTS] });
  };
  const name = [contact.first_name, contact.last_name].filter(Boolean).join(' ');
  return (
    <>
      <p>
        <Link to="/audience">← Contacts</Link>
      </p>
      <div className="page-header">
        <div>
          <h1 className="break-anywhere">{contact.email}</h1>
          <p className="muted">
            {name ? `${name} · ` : ''}
            {contact.unsubscribed ? (
              <Badge tone="warn">unsubscribed</Badge>
            ) : (
              <Badge tone="good">subscribed</Badge>
            )}{' '}
            Added <Time value={contact.created_at} />
          </p>
        </div>
        <ConfirmButton
          label="Delete"
          accessibleName="Delete this contact"
          title="Delete this contact?"
          confirmLabel="Delete the contact"
          onConfirm={remove}
        >
          <p>
            <strong>{contact.email}</strong> leaves every segment and topic; emails already sent to it stay.
          </p>
        </ConfirmButton>
      </div>
      <dl className="facts card">
        <dt>Contact id</dt>
        <dd>
          <CodeValue value={contact.id} label="Copy the contact id" />
        </dd>
      </dl>
      <ContactForm contact={contact} />
      <ContactSegments contact={contact} />
      <ContactTopics contact={contact} />
      <ReceivedEmails contact={contact} />
    </>
  );
}

/** The contact's fields and each of the team's properties, saved together (PATCH /contacts/{id}). */
function ContactForm({ contact }: { contact: Contact }) {
  const client = useQueryClient();
  const properties = useProperties();
  const [saved, setSaved] = useState(false);
  const save = async (data: FormData) => {
    setSaved(false);
    // Only the properties changed here: a value written meanwhile (an import, the API) stays.
    const values: Record<string, string | number | null> = {};
    for (const property of properties.data?.data ?? []) {
      const value = text(data, `property-${property.key}`);
      if (value === shownValue(valueOf(contact, property.key))) continue;
      values[property.key] = value === '' ? null : property.type === 'number' ? Number(value) : value;
    }
    const body: ApiRequest<'UpdateContactBody'> = {
      email: text(data, 'email'),
      first_name: text(data, 'first_name') || null,
      last_name: text(data, 'last_name') || null,
      unsubscribed: data.get('unsubscribed') === 'on',
      properties: values,
    };
    await patch(`/contacts/${contact.id}`, body);
    await client.invalidateQueries({ queryKey: [CONTACTS] });
    setSaved(true);
  };
  return (
    <section aria-labelledby="contact-details-title" className="section">
      <h2 id="contact-details-title">Details</h2>
      {saved ? <Notice tone="success">The contact is saved.</Notice> : null}
      <ActionForm action={save} submitLabel="Save the contact" label="Contact details">
        <Field label="Email">
          {(p) => <input {...p} name="email" type="email" required defaultValue={contact.email} />}
        </Field>
        <Field label="First name">
          {(p) => <input {...p} name="first_name" defaultValue={contact.first_name ?? ''} />}
        </Field>
        <Field label="Last name">
          {(p) => <input {...p} name="last_name" defaultValue={contact.last_name ?? ''} />}
        </Field>
        <div className="field checkbox">
          <label>
            <input type="checkbox" name="unsubscribed" defaultChecked={contact.unsubscribed} /> Unsubscribed from every
            broadcast
          </label>
        </div>
        {(properties.data?.data ?? []).map((property) => (
          <PropertyField key={property.id} property={property} value={valueOf(contact, property.key)} />
        ))}
      </ActionForm>
    </section>
  );
}

/** A property's value on the contact (the API answers each as `{ type, value }`). */
function valueOf(contact: Contact, key: string): unknown {
  const entry = contact.properties[key];
  return entry !== null && typeof entry === 'object' && 'value' in entry ? entry.value : entry;
}

/** A property's value as its field shows it. */
function shownValue(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

function PropertyField({ property, value }: { property: Property; value: unknown }) {
  const fallback = property.fallback_value === null ? 'no fallback' : `fallback: ${String(property.fallback_value)}`;
  return (
    <Field label={property.key} hint={`A ${property.type} property; empty uses its ${fallback}.`}>
      {(p) => (
        <input
          {...p}
          name={`property-${property.key}`}
          type={property.type === 'number' ? 'number' : 'text'}
          step={property.type === 'number' ? 'any' : undefined}
          defaultValue={shownValue(value)}
        />
      )}
    </Field>
  );
}

function ContactSegments({ contact }: { contact: Contact }) {
  const client = useQueryClient();
  const all = useSegments();
  const mine = useQuery({
    queryKey: [CONTACTS, 'segments', contact.id],
    queryFn: () => get<ApiShape<'SegmentList'>>(`/contacts/${contact.id}/segments`, { limit: 100 }),
  });
  const [error, setError] = useState<unknown>(null);
  const change = async (method: 'add' | 'remove', segmentId: string) => {
    setError(null);
    try {
      if (method === 'add') await post(`/contacts/${contact.id}/segments/${segmentId}`);
      else await del(`/contacts/${contact.id}/segments/${segmentId}`);
      await client.invalidateQueries({ queryKey: [CONTACTS] });
    } catch (err) {
      setError(err);
    }
  };
  const joined = new Set((mine.data?.data ?? []).map((s) => s.id));
  const others = (all.data?.data ?? []).filter((s) => !joined.has(s.id));
  return (
    <section aria-labelledby="contact-segments-title" className="section">
      <h2 id="contact-segments-title">Segments</h2>
      <ErrorMessage error={mine.error ?? error} />
      {mine.data ? (
        mine.data.data.length === 0 ? (
          <p className="muted">In no segment.</p>
        ) : (
          <ul className="plain-list" aria-label="The contact's segments">
            {mine.data.data.map((segment) => (
              <li key={segment.id}>
                {segment.name}{' '}
                <button
                  type="button"
                  className="button small"
                  aria-label={`Remove from ${segment.name}`}
                  onClick={() => void change('remove', segment.id)}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )
      ) : (
        <Loading />
      )}
      {others.length > 0 ? (
        <form
          className="inline-form"
          aria-label="Add to a segment"
          onSubmit={(event) => {
            event.preventDefault();
            const segmentId = text(new FormData(event.currentTarget), 'segment_id');
            if (segmentId) void change('add', segmentId);
          }}
        >
          <Field label="Segment">
            {(p) => (
              <select {...p} name="segment_id">
                {others.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <button type="submit" className="button">
            Add
          </button>
        </form>
      ) : null}
    </section>
  );
}

type TopicChoice = ApiShape<'ContactTopicList'>['data'][number];

/** The contact's choice for each topic (its own, or the topic's default), changed and saved together. */
function ContactTopics({ contact }: { contact: Contact }) {
  const client = useQueryClient();
  const [saved, setSaved] = useState(false);
  const topics = useQuery({
    queryKey: [CONTACTS, 'topics', contact.id],
    queryFn: () => get<ApiShape<'ContactTopicList'>>(`/contacts/${contact.id}/topics`, { limit: 100 }),
  });
  const save = async (data: FormData) => {
    setSaved(false);
    // Only the choices changed here: an untouched topic keeps following its default.
    const choices = (topics.data?.data ?? []).flatMap((topic) => {
      const subscription = text(data, `topic-${topic.id}`) as TopicChoice['subscription'];
      return subscription === topic.subscription ? [] : [{ id: topic.id, subscription }];
    });
    if (choices.length > 0) await patch(`/contacts/${contact.id}/topics`, choices);
    await client.invalidateQueries({ queryKey: [CONTACTS, 'topics', contact.id] });
    setSaved(true);
  };
  return (
    <section aria-labelledby="contact-topics-title" className="section">
      <h2 id="contact-topics-title">Topics</h2>
      <ErrorMessage error={topics.error} />
      {saved ? <Notice tone="success">The topic choices are saved.</Notice> : null}
      {topics.data ? (
        topics.data.data.length === 0 ? (
          <p className="muted">The team has no topics.</p>
        ) : (
          <ActionForm action={save} submitLabel="Save the choices" label="Topic choices">
            {topics.data.data.map((topic) => (
              <Field key={topic.id} label={topic.name} hint={topic.description ?? undefined}>
                {(p) => (
                  <select {...p} name={`topic-${topic.id}`} defaultValue={topic.subscription}>
                    <option value="opt_in">Subscribed (opt in)</option>
                    <option value="opt_out">Not subscribed (opt out)</option>
                  </select>
                )}
              </Field>
            ))}
          </ActionForm>
        )
      ) : (
        <Loading />
      )}
    </section>
  );
}

/** The latest emails sent to the contact's address, with where each stands. */
function ReceivedEmails({ contact }: { contact: Contact }) {
  const emails = useQuery({
    queryKey: ['emails', 'to', contact.email],
    queryFn: () => get<ApiShape<'EmailList'>>('/emails', { to: contact.email, limit: 20 }),
  });
  return (
    <section aria-labelledby="contact-emails-title" className="section">
      <h2 id="contact-emails-title">Emails sent to this contact</h2>
      <ErrorMessage error={emails.error} />
      {emails.data ? (
        emails.data.data.length === 0 ? (
          <p className="muted">None yet.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Emails sent to this contact, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Subject</th>
                  <th scope="col">Last event</th>
                  <th scope="col">Sent</th>
                </tr>
              </thead>
              <tbody>
                {emails.data.data.map((email) => (
                  <tr key={email.id}>
                    <th scope="row" className="break-anywhere">
                      <Link to={`/emails/${email.id}`}>{email.subject || '(no subject)'}</Link>
                    </th>
                    <td>
                      <StatusBadge status={email.last_event} />
                    </td>
                    <td>
                      <Time value={email.created_at} stacked />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      ) : (
        <Loading />
      )}
    </section>
  );
}
