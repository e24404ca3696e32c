import { v7 as uuidv7 } from 'uuid';
import type { MessageEnvelope } from '@postline/contracts';

/** The team tests use when the team itself does not matter. */
export const TEST_TEAM_ID = '0199a1b2-0000-7000-8000-000000000001';

/** The `data` of a valid `email.delivered` event. */
export function deliveredData(emailId: string = uuidv7()) {
  return {
    email_id: emailId,
    created_at: new Date().toISOString(),
    from: 'Acme <news@acme.test>',
    to: ['someone@example.test'],
    subject: 'Hello',
  };
}

/** A valid `email.delivered` envelope, as the sender would publish it (ids are UUIDv7). */
export function deliveredEnvelope(opts: { id?: string; teamId?: string; emailId?: string } = {}): MessageEnvelope {
  return {
    id: opts.id ?? uuidv7(),
    type: 'email.delivered',
    version: 1,
    occurred_at: new Date().toISOString(),
    team_id: opts.teamId ?? TEST_TEAM_ID,
    data: deliveredData(opts.emailId),
  };
}
