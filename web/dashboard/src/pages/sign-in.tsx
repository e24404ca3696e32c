import { Link } from 'react-router';
import type { ApiRequest } from '@postline/contracts';
import { post } from '../api/client.ts';
import { useAdoptSession, type Session } from '../session.tsx';
import { ActionForm, Field, secret, text } from '../ui/form.tsx';
import { PublicFrame, useGoNext } from './public-frame.tsx';

export default function SignIn() {
  const adopt = useAdoptSession();
  const goNext = useGoNext();
  const signIn = async (data: FormData) => {
    const body: ApiRequest<'SignInBody'> = { email: text(data, 'email'), password: secret(data, 'password') };
    adopt(await post<Session>('/dashboard-api/session', body));
    goNext();
  };
  return (
    <PublicFrame title="Sign in">
      <ActionForm action={signIn} submitLabel="Sign in" label="Sign in">
        <Field label="Email">
          {(p) => <input {...p} name="email" type="email" autoComplete="username" required />}
        </Field>
        <Field label="Password">
          {(p) => <input {...p} name="password" type="password" autoComplete="current-password" required />}
        </Field>
      </ActionForm>
      <p>
        <Link to="/forgot-password">Forgot your password?</Link>
      </p>
    </PublicFrame>
  );
}
