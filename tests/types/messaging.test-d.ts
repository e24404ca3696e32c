// Type-level tests, checked by `tsc -p tsconfig.json` and never run: what must not compile. Each
// `@ts-expect-error` fails the typecheck if the line under it compiles; the line before it, which must
// compile, keeps a test from passing only because the call is broken in some other way.
import { enqueueCommand, enqueueEvent } from '@postline/platform';
import type { DeliverEmail, EmailFeedback } from '@postline/contracts';

declare const trx: Parameters<typeof enqueueCommand>[0];
declare const deliver: DeliverEmail;
declare const feedback: EmailFeedback;
const domainId = '0192f1c4-7a3b-7c2d-8e4f-5a6b7c8d9e0f';

export function commandsCarryTheirOwnPayload(): void {
  void enqueueCommand(trx, 'sender.deliver', null, deliver);
  // @ts-expect-error: sender.deliver carries a DeliverEmail, not domain-verifier.check-domain's payload
  void enqueueCommand(trx, 'sender.deliver', null, { domain_id: domainId });

  void enqueueCommand(trx, 'domain-verifier.check-domain', null, { domain_id: domainId });
  // @ts-expect-error: domain-verifier.check-domain carries a CheckDomain, not a DeliverEmail
  void enqueueCommand(trx, 'domain-verifier.check-domain', null, deliver);
}

export function eventsCarryTheirOwnPayload(): void {
  void enqueueEvent(trx, 'internal.email.feedback', null, feedback);
  // @ts-expect-error: internal.email.feedback carries an EmailFeedback, not a DeliverEmail
  void enqueueEvent(trx, 'internal.email.feedback', null, deliver);

  // @ts-expect-error: a command's routing key is not an event
  void enqueueEvent(trx, 'sender.deliver', null, deliver);
}
