// An endpoint's signing secret: hidden until asked for, then shown with a copy button; rotating it makes a
// new one that signs first while the previous one keeps signing second for 24 hours.
import { useId, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { post } from '../../api/client.ts';
import { CodeValue } from '../../ui/copy.tsx';
import { ConfirmButton } from '../../ui/dialog.tsx';
import { Notice } from '../../ui/feedback.tsx';
import { Time } from '../../ui/time.tsx';
import { WEBHOOKS, type Webhook } from './api.ts';

export function SigningSecret({ hook }: { hook: Webhook }) {
  const client = useQueryClient();
  const [shown, setShown] = useState(false);
  const headingId = useId();
  const rotate = async () => {
    await post<ApiShape<'WebhookSecret'>>(`/webhooks/${hook.id}/signing-secret/rotate`);
    await client.invalidateQueries({ queryKey: [WEBHOOKS, 'endpoint', hook.id] });
    setShown(true);
  };
  return (
    <section className="section card webhook-card" aria-labelledby={headingId}>
      <h2 id={headingId}>Signing secret</h2>
      <p className="muted">
        Every delivery carries <code>webhook-signature</code> (and <code>svix-signature</code>): verify it with this
        secret and any Standard Webhooks or Svix library.
      </p>
      {shown ? (
        <CodeValue value={hook.signing_secret} label="Copy the signing secret" />
      ) : (
        <p>
          <code aria-hidden="true">whsec_••••••••••••••••</code>
          <span className="visually-hidden">The secret is hidden.</span>
        </p>
      )}
      {hook.previous_secret_expires_at ? (
        <Notice>
          The secret was rotated: each delivery is signed twice, by the new secret first and by the previous one second,
          until <Time value={hook.previous_secret_expires_at} />. Switch your receiver to the new secret before then.
        </Notice>
      ) : null}
      <div className="actions start">
        <button type="button" className="button small" aria-expanded={shown} onClick={() => setShown(!shown)}>
          {shown ? 'Hide secret' : 'Reveal secret'}
        </button>
        <ConfirmButton
          label="Rotate secret"
          title="Rotate the signing secret?"
          confirmLabel="Rotate secret"
          danger={false}
          onConfirm={rotate}
        >
          <p>
            A new secret signs every delivery from now on. For the next 24 hours the current secret signs them too (a
            second <code>v1,</code> signature), so your receiver keeps verifying while you switch it to the new one.
          </p>
        </ConfirmButton>
      </div>
    </section>
  );
}
