// Sends what the editor shows (rendered with the sample values) to the signed-in person, through POST /emails
// like any send. The sender is the template's own From, or the onboarding sender, which may write to the
// team's members before the team has a verified domain (their copy stays in the Dev inbox).
import { useState } from 'react';
import { Link } from 'react-router';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import type { RenderedTemplate } from '@postline/contracts/placeholders';
import { post } from '../../api/client.ts';
import { useSession } from '../../session.tsx';
import { Dialog } from '../../ui/dialog.tsx';
import { ErrorMessage, Notice } from '../../ui/feedback.tsx';
import { ActionForm, Field, text } from '../../ui/form.tsx';
import type { Draft } from './editor.tsx';

const ONBOARDING_SENDER = 'Postline <onboarding@postline.test>';

export function SendTest({ draft, rendered }: { draft: Draft; rendered: RenderedTemplate }) {
  const session = useSession();
  const [open, setOpen] = useState(false);
  const [sent, setSent] = useState<{ id: string; to: string } | null>(null);
  const to = session.user?.email;
  const senders = [...new Set([draft.from.trim(), ONBOARDING_SENDER].filter(Boolean))];
  const send = async (data: FormData) => {
    if (!to) return;
    const replyTo = draft.replyTo
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    const body: ApiRequest<'SendEmailBody'> = {
      from: text(data, 'from'),
      to: [to],
      subject: `[Test] ${rendered.subject ?? draft.name}`,
      html: rendered.html,
      ...(rendered.text ? { text: rendered.text } : {}),
      ...(replyTo.length > 0 ? { reply_to: replyTo } : {}),
    };
    const answer = await post<ApiShape<'SendEmailResponse'>>('/emails', body);
    setSent({ id: answer.id, to });
  };
  return (
    <>
      <button
        type="button"
        className="button"
        onClick={() => {
          setSent(null);
          setOpen(true);
        }}
      >
        Send a test
      </button>
      <Dialog open={open} title="Send a test to yourself" onClose={() => setOpen(false)}>
        {sent ? (
          <>
            <Notice tone="success">
              Sent to {sent.to}. <Link to={`/emails/${sent.id}`}>Open the test email</Link>
            </Notice>
            <div className="actions">
              <button type="button" className="button" onClick={() => setOpen(false)}>
                Close
              </button>
            </div>
          </>
        ) : to ? (
          <ActionForm action={send} submitLabel="Send the test" label="Send a test" onCancel={() => setOpen(false)}>
            <p className="dialog-body">
              What the editor shows now, saved or not, with the sample values, to <strong>{to}</strong>.
            </p>
            <Field
              label="From"
              hint="The onboarding sender reaches the team’s members before a domain is verified (their copies stay in the Dev inbox)."
            >
              {(p) => (
                <select {...p} name="from" defaultValue={senders[0]}>
                  {senders.map((s) => (
                    <option key={s} value={s}>
                      {s}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </ActionForm>
        ) : (
          <ErrorMessage error="This session has no user address to send to." />
        )}
      </Dialog>
    </>
  );
}
