// The first account: opened from the one-time link the gateway prints at start while no user exists.
import { useQuery } from '@tanstack/react-query';
import type { ApiRequest, DashboardShape } from '@postline/contracts';
import { get, post } from '../api/client.ts';
import { useAdoptSession, type Session } from '../session.tsx';
import { ErrorMessage, Loading } from '../ui/feedback.tsx';
import { ActionForm, Field, secret, text } from '../ui/form.tsx';
import { PublicFrame, useGoNext, useLinkToken } from './public-frame.tsx';

export default function Setup() {
  const token = useLinkToken();
  const adopt = useAdoptSession();
  const goNext = useGoNext();
  const link = useQuery({
    queryKey: ['setup', token],
    queryFn: () => get<DashboardShape<'SetupLink'>>('/dashboard-api/setup', { token }),
    retry: false,
  });
  const create = async (data: FormData) => {
    const body: ApiRequest<'SetupBody'> = {
      token,
      name: text(data, 'name'),
      email: text(data, 'email'),
      password: secret(data, 'password'),
      team_name: text(data, 'team_name'),
    };
    adopt(await post<Session>('/dashboard-api/setup', body));
    goNext();
  };
  return (
    <PublicFrame title="Create the first account">
      {link.isPending ? <Loading /> : null}
      {link.error ? (
        <>
          <ErrorMessage error={link.error} />
          <p>
            This link works once, for 24 hours, and only while no account exists. Restart the gateway for a new link, or
            make an account with <code>npm run admin -- user create</code>.
          </p>
        </>
      ) : null}
      {link.data ? (
        <ActionForm action={create} submitLabel="Create account" label="Create the first account">
          <p>You become the admin of a new team. Add the people you work with afterwards, from the Team page.</p>
          <Field label="Your name">{(p) => <input {...p} name="name" autoComplete="name" required />}</Field>
          <Field label="Email">
            {(p) => <input {...p} name="email" type="email" autoComplete="username" required />}
          </Field>
          <Field label="Password" hint="At least 10 characters.">
            {(p) => (
              <input {...p} name="password" type="password" autoComplete="new-password" minLength={10} required />
            )}
          </Field>
          <Field label="Team name">
            {(p) => <input {...p} name="team_name" autoComplete="organization" required />}
          </Field>
        </ActionForm>
      ) : null}
    </PublicFrame>
  );
}
