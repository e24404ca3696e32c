// The team's members (admins only in the API): each one's role, changed in place; a password-reset link made
// for them (shown once); removal with confirmation. The API keeps one admin: its refusal is shown as said.
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, DashboardShape } from '@postline/contracts';
import { ApiError, del, patch, post } from '../../api/client.ts';
import { MEMBERS, useMembers } from '../../api/people.ts';
import { useSession } from '../../session.tsx';
import { ConfirmButton, Dialog } from '../../ui/dialog.tsx';
import { Badge, ErrorMessage, Loading, Notice } from '../../ui/feedback.tsx';
import { Time } from '../../ui/time.tsx';
import { ShownLink } from './shown-link.tsx';

type Member = DashboardShape<'MemberList'>['data'][number];
export function Members() {
  const members = useMembers();
  const [error, setError] = useState<unknown>(null);
  const refused = members.error instanceof ApiError && members.error.statusCode === 403;
  return (
    <section aria-labelledby="members-title" className="section">
      <h2 id="members-title">Members</h2>
      {refused ? (
        <Notice>{members.error?.message} Ask one of the team’s admins to invite someone or change a role.</Notice>
      ) : (
        <ErrorMessage error={members.error} />
      )}
      <ErrorMessage error={error} />
      {members.isPending ? <Loading /> : null}
      {members.data ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Members</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.data.data.map((m) => (
                <MemberRow key={m.id} member={m} onError={setError} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function MemberRow({ member, onError }: { member: Member; onError: (error: unknown) => void }) {
  const client = useQueryClient();
  const session = useSession();
  const [busy, setBusy] = useState(false);
  const you = session.user?.id === member.id;
  const changeRole = async (role: string) => {
    const body: ApiRequest<'UpdateMemberBody'> = { role: role as 'admin' | 'member' };
    setBusy(true);
    onError(null);
    try {
      await patch(`/dashboard-api/members/${member.id}`, body);
    } catch (err) {
      onError(err);
    } finally {
      setBusy(false);
      await client.invalidateQueries({ queryKey: MEMBERS });
      if (you) await client.invalidateQueries({ queryKey: ['session'] });
    }
  };
  return (
    <tr>
      <th scope="row">
        {member.name} {you ? <Badge tone="info">you</Badge> : null}
      </th>
      <td>{member.email}</td>
      <td>
        <label htmlFor={`role-${member.id}`} className="visually-hidden">
          Role of {member.name}
        </label>
        <select
          id={`role-${member.id}`}
          value={member.role}
          disabled={busy}
          onChange={(e) => void changeRole(e.target.value)}
        >
          <option value="admin">Admin</option>
          <option value="member">Member</option>
        </select>
      </td>
      <td>
        <Time value={member.created_at} />
      </td>
      <td className="row-actions">
        <ResetLink member={member} />
        <ConfirmButton
          label="Remove"
          accessibleName={`Remove ${member.name}`}
          title={`Remove ${member.name} from the team?`}
          confirmLabel="Remove member"
          onConfirm={async () => {
            await del(`/dashboard-api/members/${member.id}`);
            await client.invalidateQueries({ queryKey: MEMBERS });
          }}
        >
          <p>
            {member.email} loses access to this team at their next request. Their account and their other teams stay.
          </p>
        </ConfirmButton>
      </td>
    </tr>
  );
}

function ResetLink({ member }: { member: Member }) {
  const [open, setOpen] = useState(false);
  const [made, setMade] = useState<DashboardShape<'CreatedPasswordReset'> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const close = () => {
    setOpen(false);
    setMade(null);
    setError(null);
  };
  const make = async () => {
    const body: ApiRequest<'CreatePasswordResetBody'> = { user_id: member.id };
    setBusy(true);
    setError(null);
    try {
      setMade(await post<DashboardShape<'CreatedPasswordReset'>>('/dashboard-api/password-resets', body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        className="button small"
        aria-label={`Reset password for ${member.name}`}
        onClick={() => setOpen(true)}
      >
        Reset password
      </button>
      <Dialog open={open} title={`Reset ${member.name}’s password`} onClose={close}>
        {made ? (
          <ShownLink
            sent={made.email_sent}
            url={made.url}
            email={member.email}
            what="password-reset link"
            validity={
              <>
                It works once, until <Time value={made.expires_at} />, and ends every session of the account.
              </>
            }
          />
        ) : (
          <>
            <p>
              A link for {member.email} to choose a new password, valid for one hour. Their current password keeps
              working until they use it.
            </p>
            <ErrorMessage error={error} />
          </>
        )}
        <div className="actions">
          <button type="button" className="button" onClick={close}>
            {made ? 'Done' : 'Cancel'}
          </button>
          {made ? null : (
            <button type="button" className="button primary" disabled={busy} onClick={() => void make()}>
              Make the link
            </button>
          )}
        </div>
      </Dialog>
    </>
  );
}
