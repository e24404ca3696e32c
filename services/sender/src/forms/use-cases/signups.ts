// A hosted form's submits and confirmations, reached without a key: the form's public id names the form
// (and its team). A submit the bot trap catches writes nothing and is answered as a taken one. With double
// opt-in a submit writes a pending signup and its confirmation email in one transaction, and the contact is
// made only when the link is followed (a POST: a GET never confirms, as mail scanners open links); without,
// the contact is made at once. Either way the contact's change and its event commit together (outbox).
import type { Kysely } from 'kysely';
import type { FormField } from '@postline/contracts';
import { newId, type Logger } from '@postline/platform';
import { addSignedUpContact } from '../../audience/index.ts';
import type { FormSignupRow, SenderDb, SignupFormRow } from '../../db/schema.ts';
import {
  countSubmission,
  findFormByPublicId,
  lockSignup,
  lockSignupOf,
  markSignupConfirmed,
  upsertSignup,
} from '../db/forms.ts';
import { confirmationUrl, type FormTokens } from '../domain/form-tokens.ts';
import {
  CONFIRMATION_LIFETIME_MS,
  CONFIRMATION_RESEND_MS,
  judgeSubmission,
  RENDER_FIELD,
  type FieldErrors,
  type SignupInput,
} from '../domain/signup-rules.ts';
import { confirmationDomain, confirmationRequest, DEFAULT_SUBJECT, sendConfirmation } from './confirmation-email.ts';

export type SignupDeps = {
  db: Kysely<SenderDb>;
  now: () => Date;
  formTokens: FormTokens;
  /** PUBLIC_BASE_URL: where the confirmation links point (the gateway). */
  publicBaseUrl: string;
  devInbox: boolean;
  logger: Logger;
};

export type SubmitOutcome =
  | { kind: 'taken' }
  | { kind: 'show'; values: Record<string, string>; errors?: FieldErrors; notice?: string }
  | { kind: 'unavailable' };

export type ConfirmOutcome = 'confirmed' | 'already_confirmed' | 'gone' | 'expired';

/** The form of a public id while it takes signups (enabled); undefined for none, or a disabled one. */
export async function openForm(deps: Pick<SignupDeps, 'db'>, publicId: string): Promise<SignupFormRow | undefined> {
  const form = await findFormByPublicId(deps.db, publicId);
  return form?.enabled ? form : undefined;
}

/** The optional fields the form asks, in the page's order. */
export function askedFields(form: SignupFormRow): FormField[] {
  return (['first_name', 'last_name'] as const).filter((field) => form.fields.includes(field));
}

/** A submit of `form` (its fields by name). */
export async function submitSignup(
  deps: SignupDeps,
  form: SignupFormRow,
  fields: Readonly<Record<string, string>>,
): Promise<SubmitOutcome> {
  const now = deps.now();
  const token = fields[RENDER_FIELD];
  const judged = judgeSubmission(fields, {
    formId: form.id,
    asked: askedFields(form),
    now,
    rendered: token === undefined || token === '' ? undefined : (deps.formTokens.rendered(token) ?? 'forged'),
  });
  switch (judged.kind) {
    case 'trapped':
      // Never the address: whoever is behind a trapped submit, it is not someone we write to.
      deps.logger.info({ formId: form.id, reason: judged.reason }, 'signup form submit caught by the bot trap');
      return { kind: 'taken' };
    case 'stale':
      return {
        kind: 'show',
        values: judged.values,
        notice: 'This page was open for a long time. Please check your details and subscribe again.',
      };
    case 'invalid':
      return { kind: 'show', values: judged.values, errors: judged.errors };
    case 'signup':
      break;
  }
  try {
    await deps.db.transaction().execute(async (trx) => {
      await countSubmission(trx, form.team_id, form.id);
      if (!form.double_opt_in) {
        const { contact } = await addSignedUpContact(trx, now, form.team_id, signedUp(form, judged.signup, false));
        await upsertSignup(trx, signupRow(form, judged.signup, { status: 'confirmed', now, contactId: contact.id }));
        return;
      }
      const existing = await lockSignupOf(trx, form.id, judged.signup.email);
      if (existing && recentlyAsked(existing, now)) return; // its confirmation is on its way: no second email
      // Confirmed already: it stays confirmed, and nothing is sent (one who has since unsubscribed comes back
      // through the preference page every broadcast links to).
      if (existing?.status === 'confirmed') return;
      const row = await upsertSignup(trx, {
        ...signupRow(form, judged.signup, { status: 'pending', now, contactId: null }),
        id: existing?.id ?? newId(),
      });
      const token = deps.formTokens.confirmation({
        teamId: form.team_id,
        signupId: row.id,
        expiresAt: new Date(now.getTime() + CONFIRMATION_LIFETIME_MS),
      });
      const request = confirmationRequest(
        {
          from: form.from_header ?? '',
          to: row.email,
          subject: form.subject ?? DEFAULT_SUBJECT,
          formName: form.name,
          url: confirmationUrl(deps.publicBaseUrl, form.public_id, token),
        },
        now,
      );
      if (!request.ok) throw new CannotConfirm(request.message);
      const domain = await confirmationDomain(trx, form.team_id, request.request, deps.devInbox);
      if (!domain.ok) throw new CannotConfirm(domain.message);
      await sendConfirmation(trx, request.request, domain.domain, now);
    });
  } catch (err) {
    if (!(err instanceof CannotConfirm)) throw err;
    // The form was valid when saved; its domain has since been deleted or lost its verification.
    deps.logger.warn(
      { formId: form.id, teamId: form.team_id, why: err.message },
      'signup form cannot send confirmations',
    );
    return { kind: 'unavailable' };
  }
  return { kind: 'taken' };
}

/** What a confirmation link names: its form (enabled, of the token's team) and signup, or why not. */
export async function openConfirmation(
  deps: Pick<SignupDeps, 'db' | 'now' | 'formTokens'>,
  publicId: string,
  token: string,
): Promise<
  | { kind: 'gone' }
  | { kind: 'expired'; form: SignupFormRow }
  | { kind: 'open'; form: SignupFormRow; teamId: string; signupId: string }
> {
  const link = deps.formTokens.confirmed(token);
  if (!link) return { kind: 'gone' };
  const form = await openForm(deps, publicId);
  if (!form || form.team_id !== link.teamId) return { kind: 'gone' };
  if (link.expiresAt.getTime() <= deps.now().getTime()) return { kind: 'expired', form };
  return { kind: 'open', form, teamId: link.teamId, signupId: link.signupId };
}

/**
 * Confirms a signup: the contact is made (or the existing one updated) in the form's segments and topics,
 * and the signup marked confirmed, in one transaction. A signup confirmed before changes nothing.
 */
export async function confirmSignup(
  deps: Pick<SignupDeps, 'db' | 'now'>,
  form: SignupFormRow,
  signupId: string,
): Promise<ConfirmOutcome> {
  return deps.db.transaction().execute(async (trx) => {
    const signup = await lockSignup(trx, form.team_id, signupId);
    if (!signup || signup.form_id !== form.id) return 'gone';
    if (signup.status === 'confirmed') return 'already_confirmed';
    const now = deps.now();
    const { contact } = await addSignedUpContact(trx, now, form.team_id, signedUp(form, signup, true));
    await markSignupConfirmed(trx, form.team_id, signup.id, contact.id, now);
    return 'confirmed';
  });
}

/** A confirmation sent within CONFIRMATION_RESEND_MS is not sent again. */
function recentlyAsked(signup: FormSignupRow, now: Date): boolean {
  return (
    signup.status === 'pending' &&
    signup.confirmation_sent_at !== null &&
    now.getTime() - signup.confirmation_sent_at.getTime() < CONFIRMATION_RESEND_MS
  );
}

function signedUp(form: SignupFormRow, signup: SignupInput, confirmed: boolean) {
  return { ...signup, segmentIds: form.segment_ids, topicIds: form.topic_ids, formId: form.id, confirmed };
}

function signupRow(
  form: SignupFormRow,
  signup: SignupInput,
  state: { status: 'pending' | 'confirmed'; now: Date; contactId: string | null },
) {
  const confirmed = state.status === 'confirmed';
  return {
    id: newId(),
    team_id: form.team_id,
    form_id: form.id,
    email: signup.email,
    first_name: signup.first_name,
    last_name: signup.last_name,
    status: state.status,
    confirmation_sent_at: confirmed ? null : state.now,
    confirmed_at: confirmed ? state.now : null,
    contact_id: state.contactId,
    created_at: state.now,
  };
}

/** The form's confirmation email cannot be sent now: the submit writes nothing. */
class CannotConfirm extends Error {}
