// Invites (admins only): invite an address with a role (the link emailed, or shown once to copy), the open
// invites, and revoking one.
import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, DashboardShape } from '@postline/contracts';
import { del, get, post } from '../../api/client.ts';
import { ConfirmButton, Dialog } from '../../ui/dialog.tsx';
import { EmptyState } from '../../ui/feedback.tsx';
import { ListTable } from '../../ui/list.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import { Time } from '../../ui/time.tsx';
import { ShownLink } from './shown-link.tsx';

const INVITES = ['invites'];

export function Invites() {
  const client = useQueryClient();
  const invites = useQuery({
    queryKey: INVITES,
    queryFn: () => get<DashboardShape<'InviteList'>>('/dashboard-api/invites'),
  });
  return (
    <section aria-labelledby="invites-title" className="section">
      <div className="page-header" style={{ alignItems: 'center' }}>
        <h2 id="invites-title" style={{ margin: 0 }}>
          Invites
        </h2>
        <Invite />
      </div>
      <ListTable
        query={invites}
        caption="Open invites"
        columns={['Email', 'Role', 'Invited', 'Expires']}
        actions
        empty={
          <EmptyState title="No open invites">
            <p>Invite someone by email: they choose their name and password from the link.</p>
          </EmptyState>
        }
        row={(invite) => (
          <tr key={invite.id}>
            <th scope="row">{invite.email}</th>
            <td>{invite.role === 'admin' ? 'Admin' : 'Member'}</td>
            <td>
              <Time value={invite.created_at} />
            </td>
            <td>
              <Time value={invite.expires_at} />
            </td>
            <td className="row-actions">
              <ConfirmButton
                label="Revoke"
                accessibleName={`Revoke the invite of ${invite.email}`}
                title={`Revoke the invite of ${invite.email}?`}
                confirmLabel="Revoke invite"
                onConfirm={async () => {
                  await del(`/dashboard-api/invites/${invite.id}`);
                  await client.invalidateQueries({ queryKey: INVITES });
                }}
              >
                <p>The link stops working. You can invite the address again later.</p>
              </ConfirmButton>
            </td>
          </tr>
        )}
      />
    </section>
  );
}

function Invite() {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const [made, setMade] = useState<DashboardShape<'CreatedInvite'> | null>(null);
  const close = () => {
    setOpen(false);
    setMade(null);
  };
  const invite = async (data: FormData) => {
    const body: ApiRequest<'CreateInviteBody'> = {
      email: text(data, 'email'),
      role: text(data, 'role') === 'admin' ? 'admin' : 'member',
    };
    setMade(await post<DashboardShape<'CreatedInvite'>>('/dashboard-api/invites', body));
    await client.invalidateQueries({ queryKey: INVITES });
  };
  return (
    <>
      <button type="button" className="button primary" onClick={() => setOpen(true)}>
        Invite someone
      </button>
      <Dialog open={open} title={made ? 'Invite made' : 'Invite someone'} onClose={close}>
        {made ? (
          <>
            <ShownLink
              sent={made.email_sent}
              url={made.url}
              email={made.email}
              what="invite link"
              validity={
                <>
                  It works once, until <Time value={made.expires_at} />.
                </>
              }
            />
            <div className="actions">
              <button type="button" className="button primary" onClick={close}>
                Done
              </button>
            </div>
          </>
        ) : (
          <ActionForm action={invite} submitLabel="Invite" label="Invite someone" onCancel={close}>
            <Field label="Email">{(p) => <input {...p} name="email" type="email" required autoComplete="off" />}</Field>
            <Field label="Role" hint="Members do everything but manage API keys and the team’s people.">
              {(p) => (
                <select {...p} name="role" defaultValue="member">
                  <option value="member">Member</option>
                  <option value="admin">Admin</option>
                </select>
              )}
            </Field>
          </ActionForm>
        )}
      </Dialog>
    </>
  );
}
