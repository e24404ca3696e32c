// The signed-in person's own account: their sign-in sessions (revoke any) and their password (changing it
// ends every other session).
import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiRequest, DashboardShape } from '@postline/contracts';
import { del, get, put } from '../api/client.ts';
import { useSession } from '../session.tsx';
import { ConfirmButton } from '../ui/dialog.tsx';
import { Badge, ErrorMessage, Loading, Notice } from '../ui/feedback.tsx';
import { ActionForm, Field, secret } from '../ui/form.tsx';
import { Time } from '../ui/time.tsx';

const SESSIONS = ['sessions'];

export default function Account() {
  const session = useSession();
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Your account</h1>
          <p className="muted">
            {session.user?.name} · {session.user?.email}
          </p>
        </div>
      </div>
      <Sessions />
      <ChangePassword />
    </>
  );
}

function Sessions() {
  const client = useQueryClient();
  const sessions = useQuery({
    queryKey: SESSIONS,
    queryFn: () => get<DashboardShape<'DashboardSessionList'>>('/dashboard-api/sessions'),
  });
  return (
    <section aria-labelledby="sessions-title" className="section">
      <h2 id="sessions-title">Signed-in sessions</h2>
      <ErrorMessage error={sessions.error} />
      {sessions.isPending ? <Loading /> : null}
      {sessions.data ? (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Browser</th>
                <th scope="col">Address</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last seen</th>
                <th scope="col">Ends</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.data.data.map((s) => (
                <tr key={s.id}>
                  <td className="truncate" title={s.user_agent ?? ''}>
                    {s.user_agent ?? 'Unknown'} {s.current ? <Badge tone="info">this session</Badge> : null}
                  </td>
                  <td>{s.ip ?? '—'}</td>
                  <td>
                    <Time value={s.created_at} stacked />
                  </td>
                  <td>
                    <Time value={s.last_seen_at} stacked />
                  </td>
                  <td>
                    <Time value={s.expires_at} stacked />
                  </td>
                  <td className="row-actions">
                    {s.current ? null : (
                      <ConfirmButton
                        label="Revoke"
                        accessibleName={`Revoke the session from ${s.ip ?? 'an unknown address'}`}
                        title="Revoke this session?"
                        confirmLabel="Revoke session"
                        onConfirm={async () => {
                          await del(`/dashboard-api/sessions/${s.id}`);
                          await client.invalidateQueries({ queryKey: SESSIONS });
                        }}
                      >
                        <p>The browser using it is signed out at its next request.</p>
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function ChangePassword() {
  const client = useQueryClient();
  const [done, setDone] = useState(false);
  const change = async (data: FormData) => {
    const body: ApiRequest<'ChangePasswordBody'> = {
      current_password: secret(data, 'current_password'),
      new_password: secret(data, 'new_password'),
    };
    setDone(false);
    await put('/dashboard-api/password', body);
    setDone(true);
    await client.invalidateQueries({ queryKey: SESSIONS });
  };
  return (
    <section aria-labelledby="password-title" className="section">
      <h2 id="password-title">Password</h2>
      {done ? <Notice tone="success">Password changed. Every other session has been signed out.</Notice> : null}
      <ActionForm action={change} submitLabel="Change password" label="Change password">
        <Field label="Current password">
          {(p) => <input {...p} name="current_password" type="password" autoComplete="current-password" required />}
        </Field>
        <Field label="New password" hint="At least 10 characters. Every other session is signed out.">
          {(p) => (
            <input {...p} name="new_password" type="password" autoComplete="new-password" minLength={10} required />
          )}
        </Field>
      </ActionForm>
    </section>
  );
}
