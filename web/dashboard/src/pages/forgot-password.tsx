// Asking for a reset link by email. The answer is the same whether or not the address has an account.
import { useState } from 'react';
import { Link } from 'react-router';
import { post } from '../api/client.ts';
import { Notice } from '../ui/feedback.tsx';
import { ActionForm, Field, text } from '../ui/form.tsx';
import { PublicFrame } from './public-frame.tsx';

export default function ForgotPassword() {
  const [sent, setSent] = useState(false);
  const request = async (data: FormData) => {
    await post('/dashboard-api/password-resets/request', { email: text(data, 'email') });
    setSent(true);
  };
  return (
    <PublicFrame title="Reset your password">
      {sent ? (
        <Notice tone="success">
          If an account has this address and this install sends its own mail, a reset link is on its way. Otherwise, ask
          an admin of your team for one.
        </Notice>
      ) : (
        <ActionForm action={request} submitLabel="Send reset link" label="Reset your password">
          <Field label="Email">
            {(p) => <input {...p} name="email" type="email" autoComplete="username" required />}
          </Field>
        </ActionForm>
      )}
      <p>
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </PublicFrame>
  );
}
