// A team's signup forms and the signups they took. Every query by id filters by team; the hosted pages find
// a form by its public id alone (that id is their credential) and go on with the team it names.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { paginate, type Page } from '@postline/platform';
import type { FormSignupRow, SenderDb, SignupFormRow } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** What a form's owner sets. */
export type FormFields = {
  name: string;
  segment_ids: string[];
  topic_ids: string[];
  fields: string[];
  double_opt_in: boolean;
  from_header: string | null;
  subject: string | null;
  redirect_url: string | null;
  thank_you_message: string | null;
  enabled: boolean;
};

export type SignupCounts = { pending: number; confirmed: number };

export async function insertForm(
  db: Db,
  form: FormFields & { id: string; teamId: string; publicId: string; now: Date },
): Promise<SignupFormRow> {
  const { id, teamId, publicId, now, ...fields } = form;
  return db
    .insertInto('signup_forms')
    .values({ ...fields, id, team_id: teamId, public_id: publicId, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findForm(
  db: Db,
  teamId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<SignupFormRow | undefined> {
  let query = db.selectFrom('signup_forms').selectAll().where('team_id', '=', teamId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** The form of a hosted page's public id, whichever team's (the id is the credential). */
export async function findFormByPublicId(db: Db, publicId: string): Promise<SignupFormRow | undefined> {
  return db.selectFrom('signup_forms').selectAll().where('public_id', '=', publicId).executeTakeFirst();
}

export async function listForms(db: Db, teamId: string, page: PaginationQuery): Promise<Page<SignupFormRow>> {
  return paginate(db.selectFrom('signup_forms').selectAll().where('team_id', '=', teamId), page);
}

export async function updateForm(
  db: Db,
  teamId: string,
  id: string,
  fields: Partial<FormFields>,
  now: Date,
): Promise<SignupFormRow | undefined> {
  return db
    .updateTable('signup_forms')
    .set({ ...fields, updated_at: now })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes a form; its signups go with it (a pending one's link then names nothing). */
export async function deleteForm(db: Db, teamId: string, id: string): Promise<SignupFormRow | undefined> {
  return db
    .deleteFrom('signup_forms')
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function countSubmission(db: Db, teamId: string, id: string): Promise<void> {
  await db
    .updateTable('signup_forms')
    .set({ submissions: sql<string>`submissions + 1` })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .execute();
}

/** Pending and confirmed signups of each of these forms (a form with none is absent). */
export async function countSignups(db: Db, teamId: string, formIds: readonly string[]) {
  const counts = new Map<string, SignupCounts>();
  if (formIds.length === 0) return counts;
  const rows = await db
    .selectFrom('form_signups')
    .select(['form_id', 'status', sql<string>`count(*)`.as('n')])
    .where('team_id', '=', teamId)
    .where('form_id', 'in', formIds)
    .groupBy(['form_id', 'status'])
    .execute();
  for (const row of rows) {
    const count = counts.get(row.form_id) ?? { pending: 0, confirmed: 0 };
    count[row.status] = Number(row.n);
    counts.set(row.form_id, count);
  }
  return counts;
}

/** The signup of an address to a form, row-locked (the caller's transaction decides what to send). */
export async function lockSignupOf(
  trx: Transaction<SenderDb>,
  formId: string,
  email: string,
): Promise<FormSignupRow | undefined> {
  return trx
    .selectFrom('form_signups')
    .selectAll()
    .where('form_id', '=', formId)
    .where('email', '=', email)
    .forUpdate()
    .executeTakeFirst();
}

export async function lockSignup(
  trx: Transaction<SenderDb>,
  teamId: string,
  id: string,
): Promise<FormSignupRow | undefined> {
  return trx
    .selectFrom('form_signups')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Writes a signup of an address to a form, or, when one exists (a concurrent submit of the same address
 * included), replaces its names, status and times: one row per form and address.
 */
export async function upsertSignup(
  trx: Transaction<SenderDb>,
  signup: Omit<FormSignupRow, 'created_at'> & { created_at: Date },
): Promise<FormSignupRow> {
  return trx
    .insertInto('form_signups')
    .values(signup)
    .onConflict((oc) =>
      oc.columns(['form_id', 'email']).doUpdateSet({
        first_name: signup.first_name,
        last_name: signup.last_name,
        status: signup.status,
        confirmation_sent_at: signup.confirmation_sent_at,
        confirmed_at: signup.confirmed_at,
        contact_id: signup.contact_id,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function markSignupConfirmed(
  trx: Transaction<SenderDb>,
  teamId: string,
  id: string,
  contactId: string,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('form_signups')
    .set({ status: 'confirmed', confirmed_at: now, contact_id: contactId })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .execute();
}
