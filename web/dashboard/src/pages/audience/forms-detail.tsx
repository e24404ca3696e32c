// One signup form: what it took (submissions, pending and confirmed signups), its hosted URL and the snippet
// for the team's own site (each with a copy button), enabling or disabling it, its settings, and deleting it.
// Also the page that creates a form.
import { Link, useNavigate, useParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiRequest } from '@postline/contracts';
import { ApiError, del, get, patch, post } from '../../api/client.ts';
import { CodeValue, SourceBlock } from '../../ui/copy.tsx';
import { ConfirmButton } from '../../ui/dialog.tsx';
import { Badge, ErrorMessage, Loading } from '../../ui/feedback.tsx';
import { FormEditor } from './forms-editor.tsx';
import { FORMS, type SignupForm } from './forms.tsx';

export function NewForm() {
  const client = useQueryClient();
  const navigate = useNavigate();
  return (
    <>
      <p>
        <Link to="/audience/forms">← Signup forms</Link>
      </p>
      <h1>Create a signup form</h1>
      <FormEditor
        submitLabel="Create the form"
        onSave={async (settings) => {
          const form = await post<SignupForm>('/forms', settings);
          await client.invalidateQueries({ queryKey: [FORMS] });
          await navigate(`/audience/forms/${form.id}`);
        }}
      />
    </>
  );
}

export function FormPage() {
  const { id = '' } = useParams();
  const form = useQuery({
    queryKey: [FORMS, 'one', id],
    queryFn: () => get<SignupForm>(`/forms/${encodeURIComponent(id)}`),
  });
  if (form.error) {
    const gone = form.error instanceof ApiError && form.error.statusCode === 404;
    return (
      <>
        <h1>{gone ? 'Form not found' : 'Signup form'}</h1>
        <ErrorMessage error={form.error} />
        <Link to="/audience/forms">Back to signup forms</Link>
      </>
    );
  }
  if (!form.data) return <Loading />;
  // Keyed: the settings start from this form's values, as saved.
  return <FormView key={`${form.data.id} ${form.data.updated_at}`} form={form.data} />;
}

function FormView({ form }: { form: SignupForm }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const save = async (settings: ApiRequest<'UpdateFormBody'>) => {
    const saved = await patch<SignupForm>(`/forms/${form.id}`, settings);
    client.setQueryData([FORMS, 'one', form.id], saved);
    await client.invalidateQueries({ queryKey: [FORMS] });
  };
  const remove = async () => {
    await del(`/forms/${form.id}`);
    client.removeQueries({ queryKey: [FORMS, 'one', form.id] });
    await navigate('/audience/forms');
    await client.invalidateQueries({ queryKey: [FORMS] });
  };
  return (
    <>
      <p>
        <Link to="/audience/forms">← Signup forms</Link>
      </p>
      <div className="page-header">
        <div>
          <h1 className="break-anywhere">{form.name}</h1>
          <p className="muted">
            {form.enabled ? <Badge tone="good">enabled</Badge> : <Badge>disabled</Badge>}{' '}
            {form.double_opt_in ? 'Double opt-in' : <Badge tone="warn">no double opt-in</Badge>}
          </p>
        </div>
        <div className="actions">
          <button type="button" className="button" onClick={() => void save({ enabled: !form.enabled })}>
            {form.enabled ? 'Disable the form' : 'Enable the form'}
          </button>
          <ConfirmButton
            label="Delete"
            accessibleName="Delete this form"
            title="Delete this form?"
            confirmLabel="Delete the form"
            onConfirm={remove}
          >
            <p>Its page stops working, and pending signups can no longer be confirmed. Contacts it added stay.</p>
          </ConfirmButton>
        </div>
      </div>
      <dl className="facts card" aria-label="Signups">
        <dt>Submissions</dt>
        <dd>{form.counts.submissions}</dd>
        <dt>Pending confirmation</dt>
        <dd>{form.counts.pending}</dd>
        <dt>Confirmed</dt>
        <dd>{form.counts.confirmed}</dd>
      </dl>
      <section aria-labelledby="form-hosted">
        <h2 id="form-hosted">Hosted page</h2>
        <CodeValue value={form.hosted_url} label="Copy the hosted URL" />
        <p>
          <a href={form.hosted_url} target="_blank" rel="noreferrer">
            Open the form
          </a>
        </p>
      </section>
      <section aria-labelledby="form-embed">
        <h2 id="form-embed">Embed on your site</h2>
        <p className="muted">
          A plain HTML form that posts to the hosted page: no script. Its hidden field traps bots; keep it.
        </p>
        <SourceBlock value={form.embed_html} label="Copy the snippet" />
      </section>
      <section aria-labelledby="form-settings">
        <h2 id="form-settings">Settings</h2>
        <FormEditor form={form} submitLabel="Save the form" onSave={save} />
      </section>
    </>
  );
}
