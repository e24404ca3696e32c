// Templates and their versions: the template row (name, alias, which versions are current and published)
// and one row per version of the content.
import type { Kysely, Transaction } from 'kysely';
import type { PaginationQuery, TemplateVariable } from '@postline/contracts';
import { isUuid, paginate, type Page } from '@postline/platform';
import type { SenderDb, TemplateRow, TemplateVersionRow } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** The versioned fields, as stored. */
export type TemplateVersionFields = {
  from_header: string | null;
  subject: string | null;
  reply_to: string[] | null;
  html: string;
  text: string | null;
  variables: TemplateVariable[];
};

/** Who wrote a version: a dashboard user or an API key, by id (null: unknown, written before authors were kept). */
export type VersionAuthor = { type: 'user' | 'api_key'; id: string } | null;

/** A template of an id or alias and one of its versions. */
export type TemplateWithVersion = { template: TemplateRow; version: TemplateVersionRow };

export async function insertTemplate(
  db: Db,
  template: { id: string; teamId: string; name: string; alias: string | null; versionId: string; now: Date },
): Promise<TemplateRow> {
  return db
    .insertInto('templates')
    .values({
      id: template.id,
      team_id: template.teamId,
      name: template.name,
      alias: template.alias,
      current_version_id: template.versionId,
      published_version_id: null,
      published_at: null,
      created_at: template.now,
      updated_at: template.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertTemplateVersion(
  db: Db,
  version: TemplateVersionFields & {
    id: string;
    templateId: string;
    teamId: string;
    author: VersionAuthor;
    now: Date;
  },
): Promise<TemplateVersionRow> {
  return db
    .insertInto('template_versions')
    .values({
      id: version.id,
      template_id: version.templateId,
      team_id: version.teamId,
      from_header: version.from_header,
      subject: version.subject,
      reply_to: version.reply_to,
      html: version.html,
      text: version.text,
      variables: JSON.stringify(version.variables),
      author_type: version.author?.type ?? null,
      author_id: version.author?.id ?? null,
      published_at: null,
      created_at: version.now,
      updated_at: version.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The team's template named by `idOrAlias` (a UUID is an id, anything else an alias), locked for update
 * when `forUpdate`.
 */
export async function findTemplate(
  db: Db,
  teamId: string,
  idOrAlias: string,
  opts: { forUpdate?: boolean } = {},
): Promise<TemplateRow | undefined> {
  let query = db.selectFrom('templates').selectAll().where('team_id', '=', teamId);
  query = isUuid(idOrAlias) ? query.where('id', '=', idOrAlias.toLowerCase()) : query.where('alias', '=', idOrAlias);
  if (opts.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function findTemplateVersion(db: Db, teamId: string, id: string): Promise<TemplateVersionRow | undefined> {
  return db
    .selectFrom('template_versions')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A version in a template's history: everything but its content, besides the subject. */
export type TemplateVersionSummary = Pick<
  TemplateVersionRow,
  'id' | 'subject' | 'author_type' | 'author_id' | 'published_at' | 'created_at' | 'updated_at'
>;

/** A page of the template's versions, newest first (ids are UUIDv7: in the order they were made). */
export async function listTemplateVersions(
  db: Db,
  teamId: string,
  templateId: string,
  page: PaginationQuery,
): Promise<Page<TemplateVersionSummary>> {
  return paginate(
    db
      .selectFrom('template_versions')
      .select(['id', 'subject', 'author_type', 'author_id', 'published_at', 'created_at', 'updated_at'])
      .where('team_id', '=', teamId)
      .where('template_id', '=', templateId),
    page,
  );
}

export async function listTemplates(db: Db, teamId: string, page: PaginationQuery): Promise<Page<TemplateRow>> {
  return paginate(db.selectFrom('templates').selectAll().where('team_id', '=', teamId), page);
}

export async function updateTemplate(
  db: Db,
  teamId: string,
  id: string,
  fields: Partial<
    Pick<TemplateRow, 'name' | 'alias' | 'current_version_id' | 'published_version_id' | 'published_at'>
  > & {
    updated_at: Date;
  },
): Promise<TemplateRow> {
  return db
    .updateTable('templates')
    .set(fields)
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateTemplateVersion(
  db: Db,
  teamId: string,
  id: string,
  fields: Partial<TemplateVersionFields> & { author: VersionAuthor; updated_at: Date },
): Promise<void> {
  const { variables, author, ...rest } = fields;
  await db
    .updateTable('template_versions')
    .set({
      ...rest,
      author_type: author?.type ?? null,
      author_id: author?.id ?? null,
      ...(variables === undefined ? {} : { variables: JSON.stringify(variables) }),
    })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .execute();
}

export async function markVersionPublished(db: Db, teamId: string, id: string, at: Date): Promise<void> {
  await db
    .updateTable('template_versions')
    .set({ published_at: at })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .execute();
}

/** Deletes a template and its versions. */
export async function deleteTemplate(db: Db, teamId: string, idOrAlias: string): Promise<TemplateRow | undefined> {
  let query = db.deleteFrom('templates').where('team_id', '=', teamId);
  query = isUuid(idOrAlias) ? query.where('id', '=', idOrAlias.toLowerCase()) : query.where('alias', '=', idOrAlias);
  return query.returningAll().executeTakeFirst();
}

/** A template a send names, with its published version (null: never published). */
export type SendableTemplate = { id: string; alias: string | null; published: TemplateVersionRow | null };

/**
 * The team's templates of these ids and aliases, each with its published version: one statement for a
 * whole batch.
 */
export async function findSendableTemplates(
  db: Db,
  teamId: string,
  names: { ids: readonly string[]; aliases: readonly string[] },
): Promise<SendableTemplate[]> {
  const { ids, aliases } = names;
  if (ids.length === 0 && aliases.length === 0) return [];
  const rows = await db
    .selectFrom('templates')
    .leftJoin('template_versions as published', 'published.id', 'templates.published_version_id')
    .select([
      'templates.id as sendable_id',
      'templates.alias as sendable_alias',
      'published.id',
      'published.template_id',
      'published.team_id',
      'published.from_header',
      'published.subject',
      'published.reply_to',
      'published.html',
      'published.text',
      'published.variables',
      'published.author_type',
      'published.author_id',
      'published.published_at',
      'published.created_at',
      'published.updated_at',
    ])
    .where('templates.team_id', '=', teamId)
    .where((eb) =>
      eb.or([
        ...(ids.length > 0 ? [eb('templates.id', 'in', ids)] : []),
        ...(aliases.length > 0 ? [eb('templates.alias', 'in', aliases)] : []),
      ]),
    )
    .execute();
  return rows.map(({ sendable_id: id, sendable_alias: alias, ...version }) => ({
    id,
    alias,
    published: version.id === null ? null : (version as TemplateVersionRow),
  }));
}
