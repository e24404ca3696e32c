// A broadcast's composer: its name, segment, topic, from, reply-to, subject and message, written as HTML or
// filled from a published template (its subject and HTML, then editable). Saving creates the draft (then
// opens its page) or saves the changes.
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { fillDeclaredVariables } from '@postline/contracts/placeholders';
import { get, patch, post } from '../../api/client.ts';
import { ErrorMessage } from '../../ui/feedback.tsx';
import { ActionForm, Field, LateSelect, text } from '../../ui/form.tsx';
import { useSegments, useTopics } from '../audience/queries.ts';
import { BROADCASTS, type Broadcast } from './queries.ts';

export function NewBroadcast() {
  return (
    <>
      <div className="page-header">
        <div>
          <h1>New broadcast</h1>
          <p className="muted">
            Saved as a draft: you then preview it as a contact, send yourself a test, review it and send it.
          </p>
        </div>
      </div>
      <Composer />
    </>
  );
}

export function Composer({ broadcast }: { broadcast?: Broadcast }) {
  const segments = useSegments();
  const topics = useTopics();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [subject, setSubject] = useState(broadcast?.subject ?? '');
  const [html, setHtml] = useState(broadcast?.html ?? '');
  const [saved, setSaved] = useState(false);
  const save = async (data: FormData) => {
    setSaved(false);
    const replyTo = text(data, 'reply_to');
    const fields = {
      name: text(data, 'name') || null,
      segment_id: text(data, 'segment_id') || undefined,
      topic_id: text(data, 'topic_id') || null,
      from: text(data, 'from'),
      reply_to: replyTo ? replyTo.split(',').map((a) => a.trim()) : undefined,
      subject,
      html,
    } satisfies ApiRequest<'UpdateBroadcastBody'>;
    if (broadcast) {
      await patch(`/broadcasts/${broadcast.id}`, fields);
      await client.invalidateQueries({ queryKey: [BROADCASTS] });
      setSaved(true);
    } else {
      const made = await post<ApiShape<'SentBroadcast'>>('/broadcasts', fields);
      await client.invalidateQueries({ queryKey: [BROADCASTS] });
      void navigate(`/broadcasts/${made.id}`);
    }
  };
  return (
    <section aria-labelledby="composer-heading" className="card">
      <h2 id="composer-heading">Message</h2>
      <TemplatePicker
        onPick={(template) => {
          // Its own variables take their fallbacks (a broadcast gives them no values); the contact's
          // placeholders stay, filled for each contact when it is sent.
          setSubject(fillDeclaredVariables(template.subject ?? '', template.variables, { html: false }));
          setHtml(fillDeclaredVariables(template.html, template.variables, { html: true }));
        }}
      />
      <ActionForm action={save} submitLabel={broadcast ? 'Save the draft' : 'Create the draft'} label="Broadcast">
        <Field label="Name" hint="For you: contacts never see it.">
          {(p) => <input {...p} name="name" maxLength={255} defaultValue={broadcast?.name ?? ''} />}
        </Field>
        <Field label="Segment">
          {(p) => (
            <LateSelect
              {...p}
              name="segment_id"
              initial={broadcast?.segment_id ?? ''}
              anyLabel="Choose a segment"
              options={(segments.data?.data ?? []).map((s) => ({ value: s.id, label: s.name }))}
            />
          )}
        </Field>
        <Field label="Topic" hint="Under a topic, contacts who left it do not get the broadcast.">
          {(p) => (
            <LateSelect
              {...p}
              name="topic_id"
              initial={broadcast?.topic_id ?? ''}
              anyLabel="No topic"
              options={(topics.data?.data ?? []).map((t) => ({ value: t.id, label: t.name }))}
            />
          )}
        </Field>
        <Field label="From" hint="An address on one of your verified domains, as Name <news@example.com>.">
          {(p) => <input {...p} name="from" required defaultValue={broadcast?.from ?? ''} />}
        </Field>
        <Field label="Reply-to" hint="Optional; several separated by commas.">
          {(p) => <input {...p} name="reply_to" defaultValue={broadcast?.reply_to?.join(', ') ?? ''} />}
        </Field>
        <Field label="Subject">
          {(p) => <input {...p} name="subject" value={subject} onChange={(e) => setSubject(e.target.value)} />}
        </Field>
        <Field
          label="HTML"
          hint={
            <>
              Personalise with <code>{'{{{contact.first_name|there}}}'}</code> or any property (
              <code>{'{{{contact.plan}}}'}</code>); <code>{'{{{RESEND_UNSUBSCRIBE_URL}}}'}</code> is each contact&apos;s
              unsubscribe link.
            </>
          }
        >
          {(p) => (
            <textarea
              {...p}
              name="html"
              rows={12}
              className="code"
              value={html}
              onChange={(e) => setHtml(e.target.value)}
            />
          )}
        </Field>
      </ActionForm>
      {saved ? (
        <p role="status" className="muted">
          The draft is saved.
        </p>
      ) : null}
    </section>
  );
}

type TemplateVersion = ApiShape<'TemplateVersion'>;

/**
 * A template's published version (what its sends use; the template's own GET shows its current version,
 * which may be a newer draft): found in its version history, newest first, then read whole.
 */
async function publishedVersionOf(templateId: string): Promise<TemplateVersion> {
  let after: string | undefined;
  for (;;) {
    const page = await get<ApiShape<'TemplateVersionList'>>(`/templates/${templateId}/versions`, { limit: 100, after });
    const published = page.data.find((version) => version.published);
    if (published) return get<TemplateVersion>(`/templates/${templateId}/versions/${published.id}`);
    if (!page.has_more || page.data.length === 0) throw new Error('The template has no published version.');
    after = page.data.at(-1)?.id;
  }
}

/** Fills the subject and HTML from one of the team's published templates: its published version. */
function TemplatePicker({ onPick }: { onPick: (template: TemplateVersion) => void }) {
  const templates = useQuery({
    queryKey: ['templates', 'published'],
    queryFn: () => get<ApiShape<'TemplateList'>>('/templates', { limit: 100 }),
  });
  const [chosen, setChosen] = useState('');
  const [error, setError] = useState<unknown>(null);
  const published = (templates.data?.data ?? []).filter((t) => t.status === 'published');
  if (published.length === 0) return null;
  return (
    <div className="filters">
      <div className="field">
        <label htmlFor="broadcast-template">Start from a template</label>
        <select id="broadcast-template" value={chosen} onChange={(e) => setChosen(e.target.value)}>
          <option value="">Choose a template</option>
          {published.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name}
            </option>
          ))}
        </select>
      </div>
      <div className="actions">
        <button
          type="button"
          className="button"
          disabled={!chosen}
          onClick={() => {
            setError(null);
            publishedVersionOf(chosen).then(onPick, (err: unknown) => setError(err));
          }}
        >
          Use the template
        </button>
      </div>
      <ErrorMessage error={error} />
    </div>
  );
}
