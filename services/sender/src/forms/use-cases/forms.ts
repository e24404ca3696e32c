// A team's signup forms (a Postline extension): created, read, changed and deleted with a full-access key or
// a session. A form is checked whole on every save: its segments and topics are the team's, and with double
// opt-in its confirmation email can be sent (its from on a verified domain of the team's), so that a saved
// form never fails a person at submit time for a reason its owner could have been told.
import type { Kysely } from 'kysely';
import type { FormField, PaginationQuery } from '@postline/contracts';
import { isUuid, newId, notFound, validationError, type Page } from '@postline/platform';
import type { SenderDb, SignupFormRow } from '../../db/schema.ts';
import {
  countSignups,
  deleteForm,
  findForm,
  insertForm,
  listForms,
  updateForm,
  type FormFields,
  type SignupCounts,
} from '../db/forms.ts';
import { findSegmentIds, findTopicIds } from '../../audience/index.ts';
import { newPublicId } from '../domain/form-tokens.ts';
import { confirmationDomain, confirmationRequest, DEFAULT_SUBJECT } from './confirmation-email.ts';

export type FormDeps = { db: Kysely<SenderDb>; now: () => Date; devInbox: boolean };

/** A form's settings as a request gives them; absent (or null) keeps the current value or the default. */
export type FormInput = {
  name?: string | undefined;
  segment_ids?: string[] | null | undefined;
  topic_ids?: string[] | null | undefined;
  fields?: FormField[] | null | undefined;
  double_opt_in?: boolean | null | undefined;
  from?: string | null | undefined;
  subject?: string | null | undefined;
  redirect_url?: string | null | undefined;
  thank_you_message?: string | null | undefined;
  enabled?: boolean | null | undefined;
};

export type FormWithCounts = { form: SignupFormRow; counts: SignupCounts };

const FORM_NOT_FOUND = 'Form not found';

const NEW_FORM: Omit<FormFields, 'name'> = {
  segment_ids: [],
  topic_ids: [],
  fields: [],
  double_opt_in: true,
  from_header: null,
  subject: null,
  redirect_url: null,
  thank_you_message: null,
  enabled: true,
};

export async function createForm(deps: FormDeps, teamId: string, input: FormInput & { name: string }) {
  const fields = await checkedFields(deps, teamId, { ...NEW_FORM, name: input.name }, input);
  const form = await insertForm(deps.db, {
    ...fields,
    id: newId(),
    teamId,
    publicId: newPublicId(teamId),
    now: deps.now(),
  });
  return { form, counts: { pending: 0, confirmed: 0 } };
}

export async function getForm(deps: FormDeps, teamId: string, id: string): Promise<FormWithCounts> {
  const form = await requireForm(deps.db, teamId, id);
  return { form, counts: (await countSignups(deps.db, teamId, [form.id])).get(form.id) ?? noSignups() };
}

export async function pageOfForms(
  deps: FormDeps,
  teamId: string,
  page: PaginationQuery,
): Promise<Page<FormWithCounts>> {
  const forms = await listForms(deps.db, teamId, page);
  const counts = await countSignups(
    deps.db,
    teamId,
    forms.data.map((form) => form.id),
  );
  return { ...forms, data: forms.data.map((form) => ({ form, counts: counts.get(form.id) ?? noSignups() })) };
}

export async function changeForm(deps: FormDeps, teamId: string, id: string, input: FormInput) {
  const current = await requireForm(deps.db, teamId, id);
  const fields = await checkedFields(deps, teamId, current, input);
  const form = await updateForm(deps.db, teamId, current.id, fields, deps.now());
  if (!form) throw notFound(FORM_NOT_FOUND);
  return getForm(deps, teamId, form.id);
}

/** Deletes a form and its signups; a pending signup's link then names nothing. */
export async function deleteTeamForm(deps: FormDeps, teamId: string, id: string): Promise<SignupFormRow> {
  const form = isUuid(id) ? await deleteForm(deps.db, teamId, id.toLowerCase()) : undefined;
  if (!form) throw notFound(FORM_NOT_FOUND);
  return form;
}

async function requireForm(db: Kysely<SenderDb>, teamId: string, id: string): Promise<SignupFormRow> {
  const form = isUuid(id) ? await findForm(db, teamId, id.toLowerCase()) : undefined;
  if (!form) throw notFound(FORM_NOT_FOUND);
  return form;
}

const noSignups = (): SignupCounts => ({ pending: 0, confirmed: 0 });

/** The form's settings after `input`, checked whole (422 naming what is wrong; nothing is written then). */
async function checkedFields(
  deps: FormDeps,
  teamId: string,
  current: FormFields,
  input: FormInput,
): Promise<FormFields> {
  const next: FormFields = {
    name: input.name ?? current.name,
    segment_ids: input.segment_ids ? distinct(input.segment_ids) : current.segment_ids,
    topic_ids: input.topic_ids ? distinct(input.topic_ids) : current.topic_ids,
    fields: input.fields ? [...new Set(input.fields)] : current.fields,
    double_opt_in: input.double_opt_in ?? current.double_opt_in,
    from_header: input.from === undefined ? current.from_header : (input.from?.trim() ?? null) || null,
    subject: input.subject === undefined ? current.subject : input.subject,
    redirect_url: input.redirect_url === undefined ? current.redirect_url : input.redirect_url,
    thank_you_message:
      input.thank_you_message === undefined ? current.thank_you_message : input.thank_you_message || null,
    enabled: input.enabled ?? current.enabled,
  };
  await requireTargets(deps.db, teamId, next);
  if (next.double_opt_in) {
    if (next.from_header === null) {
      throw validationError('Missing `from` field: a form with double opt-in sends a confirmation email from it.');
    }
    const request = confirmationRequest(
      {
        from: next.from_header,
        to: 'check@postline.test',
        subject: next.subject ?? DEFAULT_SUBJECT,
        formName: next.name,
        url: 'https://example.com/',
      },
      deps.now(),
    );
    if (!request.ok) throw validationError(request.message);
    const domain = await confirmationDomain(deps.db, teamId, request.request, deps.devInbox);
    if (!domain.ok) throw validationError(domain.message);
  }
  return next;
}

/** Every segment and topic the form names is the team's (422 naming the first that is not). */
async function requireTargets(db: Kysely<SenderDb>, teamId: string, form: FormFields): Promise<void> {
  for (const [kind, ids, find] of [
    ['Segment', form.segment_ids, findSegmentIds],
    ['Topic', form.topic_ids, findTopicIds],
  ] as const) {
    const found = new Set(await find(db, teamId, ids.filter(isUuid)));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw validationError(`${kind} \`${missing}\` not found.`);
  }
}

function distinct(ids: readonly string[]): string[] {
  return [...new Set(ids.map((id) => id.trim().toLowerCase()))];
}
