// What a hosted form's submit is, decided without I/O: caught by the bot trap (a filled honeypot, a render
// token not of this form, a submit sooner than a person could fill the form in), shown again (its page was
// open too long, or something to correct), or a signup to take. The rules and their reasons are in
// docs/behaviour.md ("Signup forms").
import type { FormField } from '@postline/contracts';
import { contactEmail } from '../../audience/index.ts';
import type { RenderToken } from './form-tokens.ts';

/** A submit sooner than this after its page was shown is a bot's: a person takes longer to type an address. */
export const MIN_FILL_MS = 2_000;
/** A page shown longer ago than this is shown again with a new token (a render token is not kept forever). */
export const RENDER_TOKEN_LIFETIME_MS = 24 * 3_600_000;
/** How long a confirmation link works. */
export const CONFIRMATION_LIFETIME_MS = 48 * 3_600_000;
/**
 * A pending address asked again within this is not sent another confirmation: a form cannot be used to
 * flood someone's mailbox however many times their address is submitted.
 */
export const CONFIRMATION_RESEND_MS = 10 * 60_000;

/** The honeypot: a field people never see (off-screen, out of the tab order, hidden from assistive tech). */
export const HONEYPOT_FIELD = 'website';
/** The hidden field that carries the render token. */
export const RENDER_FIELD = 'rendered';
export const NAME_MAX = 100;

/** What a person asked for: an address, and the names the form asks (null when not given). */
export type SignupInput = { email: string; first_name: string | null; last_name: string | null };

export type FieldErrors = Partial<Record<'email' | FormField, string>>;

export type Judged =
  | { kind: 'trapped'; reason: 'honeypot' | 'foreign_token' | 'too_fast' }
  | { kind: 'stale'; values: Record<string, string> }
  | { kind: 'invalid'; values: Record<string, string>; errors: FieldErrors }
  | { kind: 'signup'; signup: SignupInput };

/**
 * Judges a submit's fields (by name, as posted) for the form `formId` asking `asked`. `rendered` is what its
 * render token names: absent for a snippet on another site (which has no page shown by us to time), or
 * 'forged' for a token that does not verify. A trapped submit is answered as a taken one and writes nothing.
 */
export function judgeSubmission(
  fields: Readonly<Record<string, string>>,
  context: { formId: string; asked: readonly FormField[]; now: Date; rendered: RenderToken | 'forged' | undefined },
): Judged {
  if ((fields[HONEYPOT_FIELD] ?? '') !== '') return { kind: 'trapped', reason: 'honeypot' };
  const { rendered } = context;
  if (rendered === 'forged' || (rendered && rendered.formId !== context.formId)) {
    return { kind: 'trapped', reason: 'foreign_token' };
  }
  const values: Record<string, string> = { email: fields['email'] ?? '' };
  for (const field of context.asked) values[field] = fields[field] ?? '';
  if (rendered) {
    const age = context.now.getTime() - rendered.renderedAt.getTime();
    if (age < MIN_FILL_MS) return { kind: 'trapped', reason: 'too_fast' };
    if (age > RENDER_TOKEN_LIFETIME_MS) return { kind: 'stale', values };
  }
  const errors: FieldErrors = {};
  // Lower case: one signup per address and form, however it is typed.
  const email = values['email']!.trim() === '' ? undefined : contactEmail(values['email']!)?.toLowerCase();
  if (values['email']!.trim() === '') errors.email = 'Enter your email address.';
  else if (email === undefined) errors.email = 'Enter an email address such as name@example.com.';
  const names: Record<FormField, string | null> = { first_name: null, last_name: null };
  for (const field of context.asked) {
    const value = values[field]!.trim();
    if (value.length > NAME_MAX) errors[field] = `Use at most ${NAME_MAX} characters.`;
    names[field] = value === '' ? null : value;
  }
  if (email === undefined || Object.keys(errors).length > 0) return { kind: 'invalid', values, errors };
  return { kind: 'signup', signup: { email, ...names } };
}
