// An invite's link: a new person makes an account; someone who has one gives its password. Either way they
// join the team and are signed in on it.
import { useQuery } from '@tanstack/react-query';
import type { ApiRequest, DashboardShape } from '@postline/contracts';
import { get, post } from '../api/client.ts';
import { useAdoptSession, type Session } from '../session.tsx';
import { ErrorMessage, Loading } from '../ui/feedback.tsx';
import { ActionForm, Field, secret, text } from '../ui/form.tsx';
import { PublicFrame, useGoNext, useLinkToken } from './public-frame.tsx';

export default function AcceptInvite() {
  const token = useLinkToken();
  const adopt = useAdoptSession();
  const goNext = useGoNext();
  const invite = useQuery({
    queryKey: ['invite', token],
    queryFn: () => get<DashboardShape<'InviteLink'>>('/dashboard-api/invites/accept', { token }),
    retry: false,
  });
  const accept = async (data: FormData) => {
    const body: ApiRequest<'AcceptInviteBody'> = { token, password: secret(data, 'password') };
    const name = text(data, 'name');
    if (name) body.name = name;
    adopt(await post<Session>('/dashboard-api/invites/accept', body));
    goNext();
  };
  const data = invite.data;
  return (
    <PublicFrame title={data ? `Join ${data.team.name}` : 'Join a team'}>
      {invite.isPending ? <Loading /> : null}
      {invite.error ? (
        <>
          <ErrorMessage error={invite.error} />
          <p>An invite works once and for 7 days. Ask the team&apos;s admin for a new one.</p>
        </>
      ) : null}
      {data ? (
        <ActionForm action={accept} submitLabel="Join the team" label="Accept the invite">
          <p>
            <strong>{data.email}</strong> is invited as {data.role === 'admin' ? 'an admin' : 'a member'}.
          </p>
          {data.existing_user ? (
            <Field label="Your password" hint="This address has an account: sign in with it to join.">
              {(p) => <input {...p} name="password" type="password" autoComplete="current-password" required />}
            </Field>
          ) : (
            <>
              <Field label="Your name">{(p) => <input {...p} name="name" autoComplete="name" required />}</Field>
              <Field label="Password" hint="At least 10 characters.">
                {(p) => (
                  <input {...p} name="password" type="password" autoComplete="new-password" minLength={10} required />
                )}
              </Field>
            </>
          )}
        </ActionForm>
      ) : null}
    </PublicFrame>
  );
}
