// A link for a person (an invite, a password reset): emailed by the server, or shown here once to hand over.
import type { ReactNode } from 'react';
import { CodeValue } from '../../ui/copy.tsx';
import { Notice } from '../../ui/feedback.tsx';

export function ShownLink({
  sent,
  url,
  email,
  what,
  validity,
}: {
  sent: boolean;
  url: string | undefined;
  email: string;
  what: string;
  validity: ReactNode;
}) {
  if (sent || !url) {
    return (
      <Notice tone="success">
        The {what} was emailed to <strong>{email}</strong>. {validity}
      </Notice>
    );
  }
  return (
    <>
      <Notice tone="warning">
        Copy the {what} now and give it to <strong>{email}</strong>: it is shown only once. {validity}
      </Notice>
      <CodeValue value={url} label={`Copy the ${what}`} />
    </>
  );
}
