// The team's templates (GET /templates): name, alias, status, whether the current version is ahead of the
// published one, last change. Create (then edit it), duplicate, delete after a confirmation.
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { del, post } from '../../api/client.ts';
import { ConfirmButton, Dialog } from '../../ui/dialog.tsx';
import { Badge, EmptyState, ErrorMessage } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { TEMPLATES, type TemplateItem } from './queries.ts';

/** What a new template starts with: the API wants some HTML, and a variable shows how placeholders look. */
const STARTER_HTML = '<p>Hello {{{NAME|there}}},</p>\n<p></p>\n';

export function TemplateList() {
  const page = useListPage<TemplateItem>(TEMPLATES, '/templates');
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Templates</h1>
          <p className="muted">
            Emails written once and sent with <code>template: {'{ id, variables }'}</code>; sends use the published
            version.
          </p>
        </div>
        <CreateTemplate />
      </div>
      <ListTable
        query={page}
        caption="Templates"
        columns={['Name', 'Alias', 'Status', 'Updated']}
        actions
        empty={
          <EmptyState title="No templates yet">
            <p>Create a template, write its HTML with {'{{{VARIABLES}}}'}, then publish it to send with it.</p>
          </EmptyState>
        }
        row={(t) => (
          <tr key={t.id}>
            <th scope="row" className="break-anywhere">
              <Link to={`/templates/${t.id}`}>{t.name}</Link>
            </th>
            <td className="break-anywhere">{t.alias ? <code>{t.alias}</code> : <span className="muted">—</span>}</td>
            <td>
              <TemplateStatus template={t} />
            </td>
            <td>
              <Time value={t.updated_at} stacked />
            </td>
            <td className="row-actions">
              <DuplicateTemplate template={t} onError={setError} />
              <DeleteTemplate template={t} />
            </td>
          </tr>
        )}
      />
      <ErrorMessage error={error} />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

/** Draft or published, and whether the current version has changes not yet published. */
export function TemplateStatus({ template }: { template: Pick<TemplateItem, 'status' | 'has_unpublished_versions'> }) {
  return (
    <>
      <Badge tone={template.status === 'published' ? 'good' : 'neutral'}>{template.status}</Badge>
      {template.has_unpublished_versions ? (
        <>
          {' '}
          <Badge tone="warn">unpublished changes</Badge>
        </>
      ) : null}
    </>
  );
}

function CreateTemplate() {
  const [open, setOpen] = useState(false);
  const navigate = useNavigate();
  const client = useQueryClient();
  const create = async (data: FormData) => {
    const alias = text(data, 'alias');
    const body: ApiRequest<'CreateTemplateBody'> = {
      name: text(data, 'name'),
      html: STARTER_HTML,
      ...(alias ? { alias } : {}),
    };
    const created = await post<ApiShape<'TemplateRef'>>('/templates', body);
    await client.invalidateQueries({ queryKey: [TEMPLATES] });
    setOpen(false);
    await navigate(`/templates/${created.id}`);
  };
  return (
    <>
      <button type="button" className="button primary" onClick={() => setOpen(true)}>
        Create a template
      </button>
      <Dialog open={open} title="Create a template" onClose={() => setOpen(false)}>
        <ActionForm action={create} submitLabel="Create" label="Create a template" onCancel={() => setOpen(false)}>
          <Field label="Name">{(p) => <input {...p} name="name" required maxLength={255} />}</Field>
          <Field label="Alias" hint="Optional: a name to send with instead of the id, such as welcome-email.">
            {(p) => <input {...p} name="alias" maxLength={128} pattern="[A-Za-z0-9][A-Za-z0-9._\-]*" />}
          </Field>
        </ActionForm>
      </Dialog>
    </>
  );
}

function DuplicateTemplate({ template, onError }: { template: TemplateItem; onError: (error: unknown) => void }) {
  const client = useQueryClient();
  const [busy, setBusy] = useState(false);
  const duplicate = async () => {
    setBusy(true);
    onError(null);
    try {
      await post(`/templates/${template.id}/duplicate`);
      await client.invalidateQueries({ queryKey: [TEMPLATES] });
    } catch (err) {
      onError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <button
      type="button"
      className="button small"
      aria-label={`Duplicate ${template.name}`}
      disabled={busy}
      onClick={() => void duplicate()}
    >
      Duplicate
    </button>
  );
}

function DeleteTemplate({ template }: { template: TemplateItem }) {
  const client = useQueryClient();
  return (
    <ConfirmButton
      label="Delete"
      accessibleName={`Delete ${template.name}`}
      title={`Delete ${template.name}?`}
      confirmLabel="Delete the template"
      onConfirm={async () => {
        await del(`/templates/${template.id}`);
        await client.invalidateQueries({ queryKey: [TEMPLATES] });
      }}
    >
      <p>Its versions go with it, and sends that name it are refused. Emails already sent keep their content.</p>
    </ConfirmButton>
  );
}
