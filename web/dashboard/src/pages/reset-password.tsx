// A password-reset link: the new password, then every session of the account ends and the person signs in.
import { useState } from 'react';
import { Link } from 'react-router';
import type { ApiRequest } from '@postline/contracts';
import { post } from '../api/client.ts';
import { Notice } from '../ui/feedback.tsx';
import { ActionForm, Field, secret } from '../ui/form.tsx';
import { PublicFrame, useLinkToken } from './public-frame.tsx';

export default function ResetPassword() {
  const token = useLinkToken();
  const [done, setDone] = useState(false);
  const complete = async (data: FormData) => {
    const body: ApiRequest<'CompletePasswordResetBody'> = { token, password: secret(data, 'password') };
    await post('/dashboard-api/password-resets/complete', body);
    setDone(true);
  };
  return (
    <PublicFrame title="Choose a new password">
      {done ? (
        <>
          <Notice tone="success">Your password is changed, and every session of your account has ended.</Notice>
          <p>
            <Link to="/sign-in">Sign in</Link>
          </p>
        </>
      ) : (
        <ActionForm action={complete} submitLabel="Set password" label="Choose a new password">
          <Field label="New password" hint="At least 10 characters.">
            {(p) => (
              <input {...p} name="password" type="password" autoComplete="new-password" minLength={10} required />
            )}
          </Field>
        </ActionForm>
      )}
    </PublicFrame>
  );
}
