import { Router, type Request } from 'express';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { formatTimestamp, isUuid, KEY_HEADER, parseInput, route, teamOf, userOf } from '@postline/platform';
import type { SenderDb, TemplateRow, TemplateVersionRow } from '../../db/schema.ts';
import type { TemplateVersionSummary, VersionAuthor } from '../db/templates.ts';
import type { VariableDeclaration } from '../domain/templates.ts';
import {
  changeTemplate,
  createTemplate,
  deleteTeamTemplate,
  duplicateTemplate,
  getTemplate,
  getTemplateVersion,
  pageOfTemplates,
  pageOfTemplateVersions,
  publishTemplate,
  revertTemplate,
} from '../use-cases/templates.ts';

export type TemplateRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

const { CreateTemplateBody, UpdateTemplateBody } = ApiRequests;

export function templateRoutes(deps: TemplateRouteDeps): Router {
  const router = Router();
  route(router, '/templates', {
    post: async (req, res) => {
      const body = parseInput(CreateTemplateBody, req.body);
      const row = await createTemplate(
        deps,
        teamOf(res),
        {
          name: body.name,
          html: body.html,
          alias: body.alias ?? null,
          from: body.from ?? null,
          subject: body.subject ?? null,
          replyTo: replyToOf(body.reply_to) ?? null,
          text: body.text ?? null,
          variables: declarations(body.variables ?? []),
        },
        authorOf(req),
      );
      res.status(201).json({ id: row.id, object: 'template' });
    },
    get: async (req, res) => {
      const page = await pageOfTemplates(deps, teamOf(res), parseInput(PaginationQuery, req.query));
      res.json({ ...page, data: page.data.map(listItem) });
    },
  });
  route(router, '/templates/:template', {
    get: async (req, res) => {
      const { template, version } = await getTemplate(deps, teamOf(res), req.params.template ?? '');
      res.json(templateBody(template, version));
    },
    patch: async (req, res) => {
      const body = parseInput(UpdateTemplateBody, req.body);
      const row = await changeTemplate(
        deps,
        teamOf(res),
        req.params.template ?? '',
        {
          name: body.name ?? undefined,
          html: body.html ?? undefined,
          alias: body.alias,
          from: body.from,
          subject: body.subject,
          replyTo: replyToOf(body.reply_to),
          text: body.text,
          variables: body.variables ? declarations(body.variables) : undefined,
        },
        authorOf(req),
      );
      res.json({ id: row.id, object: 'template' });
    },
    delete: async (req, res) => {
      const row = await deleteTeamTemplate(deps, teamOf(res), req.params.template ?? '');
      res.json({ object: 'template', id: row.id, deleted: true });
    },
  });
  route(router, '/templates/:template/publish', {
    post: async (req, res) => {
      const row = await publishTemplate(deps, teamOf(res), req.params.template ?? '');
      res.json({ id: row.id, object: 'template' });
    },
  });
  route(router, '/templates/:template/duplicate', {
    post: async (req, res) => {
      const row = await duplicateTemplate(deps, teamOf(res), req.params.template ?? '', authorOf(req));
      res.json({ id: row.id, object: 'template' });
    },
  });
  route(router, '/templates/:template/versions', {
    get: async (req, res) => {
      const query = parseInput(PaginationQuery, req.query);
      const { template, page } = await pageOfTemplateVersions(deps, teamOf(res), req.params.template ?? '', query);
      res.json({ ...page, data: page.data.map((version) => versionItem(template, version)) });
    },
  });
  route(router, '/templates/:template/versions/:version', {
    get: async (req, res) => {
      const { params } = req;
      const { template, version } = await getTemplateVersion(
        deps,
        teamOf(res),
        params.template ?? '',
        params.version ?? '',
      );
      res.json(versionBody(template, version));
    },
  });
  route(router, '/templates/:template/versions/:version/revert', {
    post: async (req, res) => {
      const { params } = req;
      const { template, version } = await revertTemplate(
        deps,
        teamOf(res),
        params.template ?? '',
        params.version ?? '',
        authorOf(req),
      );
      res.status(201).json(versionBody(template, version));
    },
  });
  return router;
}

/** Who makes this request: the dashboard user of a session, else the API key (the gateway's headers). */
function authorOf(req: Request): VersionAuthor {
  const user = userOf(req);
  if (user) return { type: 'user', id: user.id };
  const key = req.header(KEY_HEADER);
  return key && isUuid(key) ? { type: 'api_key', id: key } : null;
}

function versionItem(template: TemplateRow, version: TemplateVersionSummary) {
  return {
    id: version.id,
    subject: version.subject,
    author: version.author_type && version.author_id ? { type: version.author_type, id: version.author_id } : null,
    current: version.id === template.current_version_id,
    published: version.id === template.published_version_id,
    published_at: version.published_at ? formatTimestamp(version.published_at) : null,
    created_at: formatTimestamp(version.created_at),
    updated_at: formatTimestamp(version.updated_at),
  };
}

function versionBody(template: TemplateRow, version: TemplateVersionRow) {
  return {
    object: 'template_version',
    template_id: template.id,
    ...versionItem(template, version),
    from: version.from_header,
    reply_to: version.reply_to,
    html: version.html,
    text: version.text,
    variables: variablesBody(version),
  };
}

function replyToOf(value: string | string[] | null | undefined): string[] | null | undefined {
  return typeof value === 'string' ? [value] : value;
}

function declarations(variables: z.infer<typeof ApiRequests.TemplateVariables>): VariableDeclaration[] {
  return variables.map((variable) => ({
    key: variable.key,
    type: variable.type,
    fallback_value: variable.fallback_value ?? variable.fallbackValue ?? null,
  }));
}

function status(row: TemplateRow): 'draft' | 'published' {
  return row.published_version_id === null ? 'draft' : 'published';
}

function listItem(row: TemplateRow) {
  return {
    id: row.id,
    name: row.name,
    status: status(row),
    published_at: row.published_at ? formatTimestamp(row.published_at) : null,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    alias: row.alias,
    has_unpublished_versions: hasUnpublishedVersions(row),
  };
}

function templateBody(row: TemplateRow, version: TemplateVersionRow) {
  return {
    object: 'template',
    id: row.id,
    current_version_id: row.current_version_id,
    alias: row.alias,
    name: row.name,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    status: status(row),
    published_at: row.published_at ? formatTimestamp(row.published_at) : null,
    from: version.from_header,
    subject: version.subject,
    reply_to: version.reply_to,
    html: version.html,
    text: version.text,
    variables: variablesBody(version),
    has_unpublished_versions: hasUnpublishedVersions(row),
  };
}

function variablesBody(version: TemplateVersionRow) {
  return version.variables.map((variable) => ({
    id: variable.id,
    key: variable.key,
    type: variable.type,
    fallback_value: variable.fallback_value,
    created_at: formatTimestamp(new Date(variable.created_at)),
    updated_at: formatTimestamp(new Date(variable.updated_at)),
  }));
}

/** A template never published has nothing to be ahead of: its status says `draft`. */
function hasUnpublishedVersions(row: TemplateRow): boolean {
  return row.published_version_id !== null && row.published_version_id !== row.current_version_id;
}
