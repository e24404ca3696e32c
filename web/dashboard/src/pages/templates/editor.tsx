// One template's editor: its fields, its HTML in a code editor beside a live preview, its variables (each with
// a sample value for the preview and a test send), Save draft and Publish, a test sent to oneself, and the
// version history. What is typed stays in the page until saved; PATCH sends only the fields that changed, so
// renaming a published template does not start a new version.
import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest } from '@postline/contracts';
import { ApiError, get, patch, post } from '../../api/client.ts';
import { HtmlPreview } from '../../ui/html-preview.tsx';
import { Badge, ErrorMessage, Loading, Notice } from '../../ui/feedback.tsx';
import { Field } from '../../ui/form.tsx';
import { Time } from '../../ui/time.tsx';
import { CodeEditor } from './code-editor.tsx';
import { VersionHistory } from './history.tsx';
import { TemplateStatus } from './list.tsx';
import { renderWithSamples, fallbackValue, type VariableRow } from './preview.ts';
import { TEMPLATES, useTemplate, type Template } from './queries.ts';
import { SendTest } from './send-test.tsx';
import { UnsavedGuard } from './unsaved-guard.tsx';
import { useDebounced } from './use-debounced.ts';
import { Variables } from './variables.tsx';
import './templates.css';

/** How long typing must pause before the preview renders again. */
const PREVIEW_DEBOUNCE_MS = 200;

/** The editor's fields: a template's as text fields show them ('' for none). */
export type Draft = {
  name: string;
  alias: string;
  subject: string;
  from: string;
  replyTo: string;
  text: string;
  html: string;
  variables: VariableRow[];
};

export default function TemplateEditorPage() {
  const { id = '' } = useParams();
  const template = useTemplate(id);
  if (template.error) {
    const gone = template.error instanceof ApiError && template.error.statusCode === 404;
    return (
      <>
        <h1>{gone ? 'Template not found' : 'Template'}</h1>
        <ErrorMessage error={template.error} />
        <Link to="/templates">Back to templates</Link>
      </>
    );
  }
  if (!template.data) return <Loading />;
  return <TemplateEditor key={template.data.id} template={template.data} />;
}

/** The fields of a template as the editor shows them; samples typed before are kept by key. */
export function draftOf(template: Template, samples: Record<string, string> = {}): Draft {
  return {
    name: template.name,
    alias: template.alias ?? '',
    subject: template.subject ?? '',
    from: template.from ?? '',
    replyTo: (template.reply_to ?? []).join(', '),
    text: template.text ?? '',
    html: template.html,
    variables: template.variables.map((v) => ({
      key: v.key,
      type: v.type === 'number' ? 'number' : 'string',
      fallback: v.fallback_value === null ? '' : String(v.fallback_value),
      sample: samples[v.key] ?? '',
    })),
  };
}

function samplesOf(draft: Draft): Record<string, string> {
  return Object.fromEntries(draft.variables.map((v) => [v.key, v.sample]));
}

/** The variables as the API takes them (samples are the editor's own, never saved). */
function declared(draft: Draft) {
  return draft.variables.map((v) => ({ key: v.key, type: v.type, fallback_value: fallbackValue(v) }));
}

/** The PATCH body of what changed between the saved template and the draft; empty when nothing did. */
function changes(saved: Draft, draft: Draft): ApiRequest<'UpdateTemplateBody'> {
  const body: ApiRequest<'UpdateTemplateBody'> = {};
  const orNull = (value: string) => (value.trim() === '' ? null : value.trim());
  if (draft.name !== saved.name) body.name = draft.name;
  if (draft.alias !== saved.alias) body.alias = orNull(draft.alias);
  if (draft.subject !== saved.subject) body.subject = orNull(draft.subject);
  if (draft.from !== saved.from) body.from = orNull(draft.from);
  if (draft.replyTo !== saved.replyTo) {
    const addresses = draft.replyTo
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    body.reply_to = addresses.length > 0 ? addresses : null;
  }
  if (draft.text !== saved.text) body.text = draft.text === '' ? null : draft.text;
  if (draft.html !== saved.html) body.html = draft.html;
  if (JSON.stringify(declared(draft)) !== JSON.stringify(declared(saved))) body.variables = declared(draft);
  return body;
}

function TemplateEditor({ template: initial }: { template: Template }) {
  const client = useQueryClient();
  const [template, setTemplate] = useState(initial);
  const [saved, setSaved] = useState(() => draftOf(initial));
  const [draft, setDraft] = useState(saved);
  const [busy, setBusy] = useState<'save' | 'publish' | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const dirty = Object.keys(changes(saved, draft)).length > 0;

  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    setNotice(null);
    setDraft((d) => ({ ...d, [key]: value }));
  };

  // The preview renders what was typed once typing pauses, so keystrokes in the editor never wait for it.
  const settled = useDebounced(draft, PREVIEW_DEBOUNCE_MS);
  const rendered = useMemo(() => renderWithSamples(settled, settled.variables), [settled]);

  /** Reads the template again and takes it as saved; the draft follows unless it was edited meanwhile. */
  const reload = async (keepDraft: Draft) => {
    const fresh = await get<Template>(`/templates/${template.id}`);
    client.setQueryData([TEMPLATES, 'one', template.id], fresh);
    await client.invalidateQueries({ queryKey: [TEMPLATES] });
    const next = draftOf(fresh, samplesOf(keepDraft));
    setTemplate(fresh);
    setSaved(next);
    setDraft(next);
    return fresh;
  };

  const save = async (): Promise<boolean> => {
    const body = changes(saved, draft);
    if (Object.keys(body).length === 0) return true;
    await patch(`/templates/${template.id}`, body);
    await reload(draft);
    return true;
  };

  const run = async (what: 'save' | 'publish') => {
    setBusy(what);
    setError(null);
    setNotice(null);
    try {
      await save();
      if (what === 'publish') {
        await post(`/templates/${template.id}/publish`);
        await reload(draft);
        setNotice('Published: sends with this template now use this version.');
      } else {
        setNotice('The draft is saved. Sends keep using the published version until you publish.');
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <UnsavedGuard dirty={dirty} />
      <p>
        <Link to="/templates">← Templates</Link>
      </p>
      <div className="page-header">
        <div>
          <h1 className="break-anywhere">{template.name}</h1>
          <p className="muted">
            <TemplateStatus template={template} />
            {dirty ? (
              <>
                {' '}
                <Badge tone="info">unsaved changes</Badge>
              </>
            ) : null}{' '}
            {template.published_at ? (
              <>
                Published <Time value={template.published_at} />
              </>
            ) : (
              'Never published: sends cannot use it yet.'
            )}
          </p>
        </div>
        <div className="actions">
          <button type="button" className="button" disabled={busy !== null || !dirty} onClick={() => void run('save')}>
            {busy === 'save' ? 'Saving…' : 'Save draft'}
          </button>
          <button
            type="button"
            className="button primary"
            disabled={
              busy !== null || (!dirty && template.status === 'published' && !template.has_unpublished_versions)
            }
            onClick={() => void run('publish')}
          >
            {busy === 'publish' ? 'Publishing…' : 'Publish'}
          </button>
          <SendTest draft={draft} rendered={renderWithSamples(draft, draft.variables)} />
        </div>
      </div>
      <ErrorMessage error={error} />
      {notice ? <Notice tone="success">{notice}</Notice> : null}

      <form className="template-fields card" aria-label="Template details" onSubmit={(e) => e.preventDefault()}>
        <Field label="Name">
          {(p) => (
            <input {...p} required maxLength={255} value={draft.name} onChange={(e) => set('name', e.target.value)} />
          )}
        </Field>
        <Field label="Alias" hint="Sends may name the template by it instead of its id.">
          {(p) => <input {...p} maxLength={128} value={draft.alias} onChange={(e) => set('alias', e.target.value)} />}
        </Field>
        <Field label="Subject" hint="May hold {{{VARIABLES}}} too.">
          {(p) => <input {...p} value={draft.subject} onChange={(e) => set('subject', e.target.value)} />}
        </Field>
        <Field label="From" hint="Name <address@your-domain>; a send may give its own.">
          {(p) => <input {...p} value={draft.from} onChange={(e) => set('from', e.target.value)} />}
        </Field>
        <Field label="Reply-to" hint="Addresses separated by commas.">
          {(p) => <input {...p} value={draft.replyTo} onChange={(e) => set('replyTo', e.target.value)} />}
        </Field>
      </form>

      <div className="template-workbench">
        <section aria-labelledby="template-html-title" className="template-pane">
          <h2 id="template-html-title">HTML</h2>
          <p className="hint">
            Placeholders: <code>{'{{{KEY}}}'}</code> or <code>{'{{{KEY|fallback}}}'}</code>. Tab moves to the next
            field.
          </p>
          <CodeEditor label="HTML" value={draft.html} onChange={(html) => set('html', html)} />
        </section>
        <section aria-labelledby="template-preview-title" className="template-pane">
          <h2 id="template-preview-title">Preview</h2>
          <p className="hint break-anywhere">
            Subject: <strong>{rendered.subject ?? '(none)'}</strong>
          </p>
          {rendered.missing.length > 0 ? (
            <p className="hint">
              Without a sample or a fallback, shown empty (a send would be refused):{' '}
              {rendered.missing.map((key) => (
                <code key={key}>{key}</code>
              ))}
            </p>
          ) : null}
          <HtmlPreview className="template-preview" title="Preview" html={rendered.html} />
        </section>
      </div>

      <Variables rows={draft.variables} onChange={(rows) => set('variables', rows)} />

      <section aria-labelledby="template-text-title" className="section">
        <h2 id="template-text-title">Text version</h2>
        <Field label="Text" hint="The plain-text part; empty sends HTML only. Placeholders work here too.">
          {(p) => <textarea {...p} rows={6} value={draft.text} onChange={(e) => set('text', e.target.value)} />}
        </Field>
      </section>

      <VersionHistory
        template={template}
        samples={draft.variables}
        dirty={dirty}
        onReverted={async () => {
          setError(null);
          await reload(draft);
          setNotice('Reverted: the editor shows the new draft. Publish it to send with it.');
        }}
      />
    </>
  );
}
