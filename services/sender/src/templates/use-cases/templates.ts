// Templates (as in Resend's API reference), and what a send with `template` becomes. A template points at its current
// version (what GET shows, what PATCH edits) and its published one (what sends use). PATCH edits the current
// version in place while it is unpublished; once it is the published one, PATCH starts a new current version
// from it, so the published content keeps sending unchanged until the next publish. Reverting to an older
// version starts a new current version copied from it, and leaves the published one as it is. Each version
// records who last wrote it (a dashboard user or an API key).
import type { Kysely, Transaction } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import {
  ApiError,
  PG_UNIQUE_VIOLATION,
  isUuid,
  newId,
  notFound,
  pgCode,
  validationError,
  type Page,
} from '@postline/platform';
import type { SenderDb, TemplateRow, TemplateVersionRow } from '../../db/schema.ts';
import {
  deleteTemplate,
  findSendableTemplates,
  findTemplate,
  findTemplateVersion,
  insertTemplate,
  insertTemplateVersion,
  listTemplates,
  listTemplateVersions,
  markVersionPublished,
  updateTemplate,
  updateTemplateVersion,
  type TemplateVersionFields,
  type TemplateVersionSummary,
  type TemplateWithVersion,
  type VersionAuthor,
} from '../db/templates.ts';
import { parseTemplateReference, type TemplateReference, refusalError } from '../../message/index.ts';
import {
  checkTemplateFields,
  copiedVariables,
  duplicateName,
  renderTemplateSend,
  versionVariables,
  type VariableDeclaration,
} from '../domain/templates.ts';

export type TemplateDeps = { db: Kysely<SenderDb>; now: () => Date };

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** A create's fields (null: none). */
export type TemplateInput = {
  name: string;
  alias: string | null;
  from: string | null;
  subject: string | null;
  replyTo: string[] | null;
  html: string;
  text: string | null;
  variables: VariableDeclaration[];
};

/** An update's fields: absent ones are kept, null clears. */
export type TemplateChange = {
  name?: string | undefined;
  alias?: string | null | undefined;
  from?: string | null | undefined;
  subject?: string | null | undefined;
  replyTo?: string[] | null | undefined;
  html?: string | undefined;
  text?: string | null | undefined;
  variables?: VariableDeclaration[] | undefined;
};

const TEMPLATE_NOT_FOUND = 'Template not found';
const VERSION_NOT_FOUND = 'Template version not found';

export async function createTemplate(
  deps: TemplateDeps,
  teamId: string,
  input: TemplateInput,
  author: VersionAuthor,
): Promise<TemplateRow> {
  checked(input);
  const now = deps.now();
  const id = newId();
  const versionId = newId();
  return withAlias(input.alias, () =>
    deps.db.transaction().execute(async (trx) => {
      const template = await insertTemplate(trx, { id, teamId, name: input.name, alias: input.alias, versionId, now });
      await insertTemplateVersion(trx, {
        id: versionId,
        templateId: id,
        teamId,
        author,
        now,
        from_header: input.from,
        subject: input.subject,
        reply_to: input.replyTo,
        html: input.html,
        text: input.text,
        variables: versionVariables(input.variables, [], now),
      });
      return template;
    }),
  );
}

/** The team's template of this id or alias with its current version, or 404. */
export async function getTemplate(deps: TemplateDeps, teamId: string, idOrAlias: string): Promise<TemplateWithVersion> {
  const template = await requireTemplate(deps.db, teamId, idOrAlias);
  return { template, version: await currentVersion(deps.db, template) };
}

export async function pageOfTemplates(
  deps: TemplateDeps,
  teamId: string,
  page: PaginationQuery,
): Promise<Page<TemplateRow>> {
  return listTemplates(deps.db, teamId, page);
}

/** Edits the name and alias, and the current version's content (a new version when it is the published one). */
export async function changeTemplate(
  deps: TemplateDeps,
  teamId: string,
  idOrAlias: string,
  change: TemplateChange,
  author: VersionAuthor,
): Promise<TemplateRow> {
  checked(change);
  const now = deps.now();
  const content = contentChange(change);
  return withAlias(change.alias, () =>
    deps.db.transaction().execute(async (trx) => {
      const template = await requireTemplate(trx, teamId, idOrAlias, { forUpdate: true });
      const current = await currentVersion(trx, template);
      const fields: TemplateVersionFields = {
        from_header: current.from_header,
        subject: current.subject,
        reply_to: current.reply_to,
        html: current.html,
        text: current.text,
        variables: current.variables,
        ...content,
      };
      if (change.variables !== undefined) fields.variables = versionVariables(change.variables, current.variables, now);
      let currentVersionId = template.current_version_id;
      if (Object.keys(content).length > 0 || change.variables !== undefined) {
        if (template.current_version_id === template.published_version_id) {
          currentVersionId = newId();
          await insertTemplateVersion(trx, {
            ...fields,
            id: currentVersionId,
            templateId: template.id,
            teamId,
            author,
            now,
          });
        } else {
          await updateTemplateVersion(trx, teamId, current.id, { ...fields, author, updated_at: now });
        }
      }
      return updateTemplate(trx, teamId, template.id, {
        ...(change.name === undefined ? {} : { name: change.name }),
        ...(change.alias === undefined ? {} : { alias: change.alias }),
        current_version_id: currentVersionId,
        updated_at: now,
      });
    }),
  );
}

/** Makes the current version the one sends use; publishing what is already published changes nothing. */
export async function publishTemplate(deps: TemplateDeps, teamId: string, idOrAlias: string): Promise<TemplateRow> {
  return deps.db.transaction().execute(async (trx) => {
    const template = await requireTemplate(trx, teamId, idOrAlias, { forUpdate: true });
    if (template.published_version_id === template.current_version_id) return template;
    const now = deps.now();
    await markVersionPublished(trx, teamId, template.current_version_id, now);
    return updateTemplate(trx, teamId, template.id, {
      published_version_id: template.current_version_id,
      published_at: now,
      updated_at: now,
    });
  });
}

/** A new draft template with the current version's content, named "<name> (copy)", without an alias. */
export async function duplicateTemplate(
  deps: TemplateDeps,
  teamId: string,
  idOrAlias: string,
  author: VersionAuthor,
): Promise<TemplateRow> {
  const now = deps.now();
  return deps.db.transaction().execute(async (trx) => {
    const original = await requireTemplate(trx, teamId, idOrAlias);
    const version = await currentVersion(trx, original);
    const id = newId();
    const versionId = newId();
    const template = await insertTemplate(trx, {
      id,
      teamId,
      name: duplicateName(original.name),
      alias: null,
      versionId,
      now,
    });
    await insertTemplateVersion(trx, {
      id: versionId,
      templateId: id,
      teamId,
      author,
      now,
      from_header: version.from_header,
      subject: version.subject,
      reply_to: version.reply_to,
      html: version.html,
      text: version.text,
      variables: copiedVariables(version.variables, now),
    });
    return template;
  });
}

/** A page of the template's versions, newest first, with the template they belong to; 404 for another team's. */
export async function pageOfTemplateVersions(
  deps: TemplateDeps,
  teamId: string,
  idOrAlias: string,
  page: PaginationQuery,
): Promise<{ template: TemplateRow; page: Page<TemplateVersionSummary> }> {
  const template = await requireTemplate(deps.db, teamId, idOrAlias);
  return { template, page: await listTemplateVersions(deps.db, teamId, template.id, page) };
}

/** One version of the team's template, or 404 (a version of another template is not found either). */
export async function getTemplateVersion(
  deps: TemplateDeps,
  teamId: string,
  idOrAlias: string,
  versionId: string,
): Promise<TemplateWithVersion> {
  const template = await requireTemplate(deps.db, teamId, idOrAlias);
  return { template, version: await requireVersion(deps.db, template, versionId) };
}

/**
 * Starts a new current version with the content of `versionId` (its variables as they were), written by
 * `author`. The published version is not changed: the new one is a draft until published. Reverting to
 * the current version copies it too, so the history says who went back to what.
 */
export async function revertTemplate(
  deps: TemplateDeps,
  teamId: string,
  idOrAlias: string,
  versionId: string,
  author: VersionAuthor,
): Promise<TemplateWithVersion> {
  const now = deps.now();
  return deps.db.transaction().execute(async (trx) => {
    const template = await requireTemplate(trx, teamId, idOrAlias, { forUpdate: true });
    const source = await requireVersion(trx, template, versionId);
    const version = await insertTemplateVersion(trx, {
      id: newId(),
      templateId: template.id,
      teamId,
      author,
      now,
      from_header: source.from_header,
      subject: source.subject,
      reply_to: source.reply_to,
      html: source.html,
      text: source.text,
      variables: source.variables,
    });
    const row = await updateTemplate(trx, teamId, template.id, { current_version_id: version.id, updated_at: now });
    return { template: row, version };
  });
}

/** Deletes the team's template and its versions, or 404. Emails already accepted keep their rendered content. */
export async function deleteTeamTemplate(deps: TemplateDeps, teamId: string, idOrAlias: string): Promise<TemplateRow> {
  const row = await deleteTemplate(deps.db, teamId, idOrAlias);
  if (!row) throw notFound(TEMPLATE_NOT_FOUND);
  return row;
}

/** A POST /emails body with its template rendered in, and that template's id (null: the body named none). */
export type TemplatedBody = { body: unknown; templateId: string | null };

/**
 * POST /emails bodies (or batch items) with each `template` replaced by its published content, rendered
 * (renderTemplateSend); an item that cannot be is its public error instead: a 404 for a template the team
 * does not have, a 422 for one never published, a bad `template` field or a missing or mistyped variable.
 * Every template the bodies name is read in one statement; bodies without one are returned as they are.
 * Each item is a body with the id of the template rendered into it (null without one), or an ApiError.
 */
export async function renderTemplatedBodies(
  db: Kysely<SenderDb>,
  teamId: string,
  bodies: readonly unknown[],
): Promise<(TemplatedBody | ApiError)[]> {
  const references = bodies.map((body) => {
    const parsed = parseTemplateReference(body);
    return parsed.ok ? parsed.template : refusalError(parsed.refusal);
  });
  const named = references.filter((item): item is TemplateReference => item !== null && !(item instanceof ApiError));
  const ids = [...new Set(named.filter((ref) => isId(ref.idOrAlias)).map((ref) => ref.idOrAlias.toLowerCase()))];
  const aliases = [...new Set(named.filter((ref) => !isId(ref.idOrAlias)).map((ref) => ref.idOrAlias))];
  const templates = await findSendableTemplates(db, teamId, { ids, aliases });
  return bodies.map((body, i) => {
    const reference = references[i];
    if (reference === null || reference === undefined) return { body, templateId: null };
    if (reference instanceof ApiError) return reference;
    const name = reference.idOrAlias;
    const template = templates.find((row) => (isId(name) ? row.id === name.toLowerCase() : row.alias === name));
    if (!template) return notFound(TEMPLATE_NOT_FOUND);
    if (!template.published) {
      return validationError(`The template \`${name}\` is not published: publish it before sending with it.`);
    }
    const version = template.published;
    const rendered = renderTemplateSend(body as Record<string, unknown>, reference, {
      from: version.from_header,
      subject: version.subject,
      replyTo: version.reply_to,
      html: version.html,
      text: version.text,
      variables: version.variables,
    });
    return rendered.ok ? { body: rendered.body, templateId: template.id } : refusalError(rendered.refusal);
  });
}

/** Aliases are never UUID-shaped (checkTemplateFields), so a UUID always names an id. */
function isId(idOrAlias: string): boolean {
  return isUuid(idOrAlias);
}

async function requireTemplate(
  db: Db,
  teamId: string,
  idOrAlias: string,
  opts: { forUpdate?: boolean } = {},
): Promise<TemplateRow> {
  const template = idOrAlias === '' ? undefined : await findTemplate(db, teamId, idOrAlias, opts);
  if (!template) throw notFound(TEMPLATE_NOT_FOUND);
  return template;
}

async function requireVersion(db: Db, template: TemplateRow, versionId: string): Promise<TemplateVersionRow> {
  const version = isUuid(versionId)
    ? await findTemplateVersion(db, template.team_id, versionId.toLowerCase())
    : undefined;
  if (!version || version.template_id !== template.id) throw notFound(VERSION_NOT_FOUND);
  return version;
}

async function currentVersion(db: Db, template: TemplateRow) {
  const version = await findTemplateVersion(db, template.team_id, template.current_version_id);
  // Written in the template's own transaction and deleted only with it.
  if (!version) throw new Error(`Template ${template.id} has no current version ${template.current_version_id}.`);
  return version;
}

/** The stored fields an update changes, besides the variables. */
function contentChange(change: TemplateChange): Partial<TemplateVersionFields> {
  return {
    ...(change.from === undefined ? {} : { from_header: change.from }),
    ...(change.subject === undefined ? {} : { subject: change.subject }),
    ...(change.replyTo === undefined ? {} : { reply_to: change.replyTo }),
    ...(change.html === undefined ? {} : { html: change.html }),
    ...(change.text === undefined ? {} : { text: change.text }),
  };
}

function checked(fields: TemplateChange): void {
  const refusal = checkTemplateFields(fields);
  if (refusal) throw refusalError(refusal);
}

/** Runs `write`; an alias another template of the team has (the unique index decides) is a 422. */
async function withAlias<T>(alias: string | null | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (typeof alias === 'string' && pgCode(err) === PG_UNIQUE_VIOLATION) {
      throw validationError(`A template with the alias \`${alias}\` already exists.`);
    }
    throw err;
  }
}
