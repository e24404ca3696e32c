// API keys (admins only, as in Resend): each key with what it may do and when it was last used, a flag on
// keys unused for 30 days; create one (its token shown once), rename, revoke.
import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { del, get, patch, post } from '../api/client.ts';
import { useIsAdmin } from '../session.tsx';
import { CodeValue } from '../ui/copy.tsx';
import { ConfirmButton, Dialog } from '../ui/dialog.tsx';
import { Badge, EmptyState, ErrorMessage, Notice } from '../ui/feedback.tsx';
import { ActionForm, Field, text } from '../ui/form.tsx';
import { ListTable, Pager, useListPage } from '../ui/list.tsx';
import { daysSince, Time } from '../ui/time.tsx';

type ApiKey = ApiShape<'ApiKeyList'>['data'][number];
type Domain = ApiShape<'DomainList'>['data'][number];

const KEYS = 'api-keys';
const UNUSED_DAYS = 30;

export default function ApiKeys() {
  const isAdmin = useIsAdmin();
  if (!isAdmin) {
    return (
      <>
        <h1>API keys</h1>
        <ErrorMessage error={new Error('Only the team’s admins manage API keys. Ask an admin for a key.')} />
      </>
    );
  }
  return <ApiKeysPage />;
}

function ApiKeysPage() {
  const page = useListPage<ApiKey>(KEYS, '/api-keys');
  const domains = useQuery({
    queryKey: ['domains', 'all'],
    queryFn: () => get<ApiShape<'DomainList'>>('/domains', { limit: 100 }),
  });
  const domainName = (id: string | null) => domains.data?.data.find((d) => d.id === id)?.name ?? id;
  return (
    <>
      <div className="page-header">
        <div>
          <h1>API keys</h1>
          <p className="muted">
            Programs authenticate with a key: send it as <code>Authorization: Bearer …</code>.
          </p>
        </div>
        <CreateKey domains={domains.data?.data ?? []} />
      </div>
      <ListTable
        query={page}
        caption="API keys"
        columns={['Name', 'Permission', 'Domain', 'Created', 'Last used', 'Expires']}
        actions
        empty={
          <EmptyState title="No API keys yet">
            <p>Create a key to send email from your code with any Resend SDK or plain HTTP.</p>
          </EmptyState>
        }
        row={(key) => (
          <tr key={key.id}>
            <th scope="row">
              {key.name}
              {isUnused(key) ? (
                <>
                  {' '}
                  <Badge tone="warn">unused for {UNUSED_DAYS}+ days</Badge>
                </>
              ) : null}
            </th>
            <td>{key.permission === 'sending_access' ? 'Sending' : 'Full access'}</td>
            <td>{key.domain_id ? domainName(key.domain_id) : <span className="muted">All domains</span>}</td>
            <td>
              <Time value={key.created_at} />
            </td>
            <td>
              <Time value={key.last_used_at} fallback="Never" />
            </td>
            <td>
              <Time value={key.expires_at} fallback="Never" />
            </td>
            <td className="row-actions">
              <RenameKey apiKey={key} />
              <RevokeKey apiKey={key} />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

function isUnused(key: ApiKey): boolean {
  return daysSince(key.last_used_at ?? key.created_at) >= UNUSED_DAYS;
}

const EXPIRY_CHOICES = [
  { value: '', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
];

function CreateKey({ domains }: { domains: Domain[] }) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [permission, setPermission] = useState('full_access');
  const close = () => {
    setOpen(false);
    setCreated(null);
    setPermission('full_access');
  };
  const create = async (data: FormData) => {
    const body: ApiRequest<'CreateApiKeyBody'> = {
      name: text(data, 'name'),
      permission: permission as 'full_access' | 'sending_access',
    };
    const domainId = text(data, 'domain_id');
    if (permission === 'sending_access' && domainId) body.domain_id = domainId;
    const days = Number(text(data, 'expires_in'));
    if (days > 0) body.expires_at = new Date(Date.now() + days * 86_400_000).toISOString();
    const answer = await post<ApiShape<'CreatedApiKey'>>('/api-keys', body);
    setCreated({ name: body.name, token: answer.token });
    await client.invalidateQueries({ queryKey: [KEYS] });
  };
  return (
    <>
      <button type="button" className="button primary" onClick={() => setOpen(true)}>
        Create API key
      </button>
      <Dialog open={open} title={created ? 'Your new API key' : 'Create API key'} onClose={close}>
        {created ? (
          <>
            <Notice tone="warning">
              Copy the key <strong>{created.name}</strong> now: it is shown only once and cannot be seen again.
            </Notice>
            <CodeValue value={created.token} label="Copy the API key" />
            <div className="actions">
              <button type="button" className="button primary" onClick={close}>
                Done
              </button>
            </div>
          </>
        ) : (
          <ActionForm action={create} submitLabel="Create" label="Create API key" onCancel={close}>
            <Field label="Name">{(p) => <input {...p} name="name" required maxLength={50} />}</Field>
            <Field label="Permission" hint="Sending access may only send email (POST /emails and /emails/batch).">
              {(p) => (
                <select {...p} name="permission" value={permission} onChange={(e) => setPermission(e.target.value)}>
                  <option value="full_access">Full access</option>
                  <option value="sending_access">Sending access</option>
                </select>
              )}
            </Field>
            {permission === 'sending_access' ? (
              <Field label="Domain" hint="A sending key may be held to one domain.">
                {(p) => (
                  <select {...p} name="domain_id" defaultValue="">
                    <option value="">All domains</option>
                    {domains.map((d) => (
                      <option key={d.id} value={d.id}>
                        {d.name}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            ) : null}
            <Field label="Expires" hint="An expired key is refused with 403.">
              {(p) => (
                <select {...p} name="expires_in" defaultValue="">
                  {EXPIRY_CHOICES.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label}
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

function RenameKey({ apiKey }: { apiKey: ApiKey }) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const rename = async (data: FormData) => {
    const body: ApiRequest<'UpdateApiKeyBody'> = { name: text(data, 'name') };
    await patch(`/api-keys/${apiKey.id}`, body);
    await client.invalidateQueries({ queryKey: [KEYS] });
    setOpen(false);
  };
  return (
    <>
      <button type="button" className="button small" aria-label={`Rename ${apiKey.name}`} onClick={() => setOpen(true)}>
        Rename
      </button>
      <Dialog open={open} title={`Rename ${apiKey.name}`} onClose={() => setOpen(false)}>
        <ActionForm action={rename} submitLabel="Save" label="Rename API key" onCancel={() => setOpen(false)}>
          <Field label="Name">
            {(p) => <input {...p} name="name" defaultValue={apiKey.name} required maxLength={50} />}
          </Field>
        </ActionForm>
      </Dialog>
    </>
  );
}

function RevokeKey({ apiKey }: { apiKey: ApiKey }) {
  const client = useQueryClient();
  return (
    <ConfirmButton
      label="Revoke"
      accessibleName={`Revoke ${apiKey.name}`}
      title={`Revoke ${apiKey.name}?`}
      confirmLabel="Revoke key"
      onConfirm={async () => {
        await del(`/api-keys/${apiKey.id}`);
        await client.invalidateQueries({ queryKey: [KEYS] });
      }}
    >
      <p>Every request made with this key is refused from now on. This cannot be undone.</p>
    </ConfirmButton>
  );
}
