import { Router } from 'express';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import type { SenderDb, TemplateRow, TemplateVersionRow } from '../../db/schema.ts';
import type { VariableDeclaration } from '../domain/templates.ts';
import {
  changeTemplate,
  createTemplate,
  deleteTeamTemplate,
  duplicateTemplate,
  getTemplate,
  pageOfTemplates,
  publishTemplate,
} from '../use-cases/templates.ts';

export type TemplateRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

const { CreateTemplateBody, UpdateTemplateBody } = ApiRequests;

export function templateRoutes(deps: TemplateRouteDeps): Router {
  const router = Router();
  route(router, '/templates', {
    post: async (req, res) => {
      const body = parseInput(CreateTemplateBody, req.body);
      const row = await createTemplate(deps, teamOf(res), {
        name: body.name,
        html: body.html,
        alias: body.alias ?? null,
        from: body.from ?? null,
        subject: body.subject ?? null,
        replyTo: replyToOf(body.reply_to) ?? null,
        text: body.text ?? null,
        variables: declarations(body.variables ?? []),
      });
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
      const row = await changeTemplate(deps, teamOf(res), req.params.template ?? '', {
        name: body.name ?? undefined,
        html: body.html ?? undefined,
        alias: body.alias,
        from: body.from,
        subject: body.subject,
        replyTo: replyToOf(body.reply_to),
        text: body.text,
        variables: body.variables ? declarations(body.variables) : undefined,
      });
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
      const row = await duplicateTemplate(deps, teamOf(res), req.params.template ?? '');
      res.json({ id: row.id, object: 'template' });
    },
  });
  return router;
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
    variables: version.variables.map((variable) => ({
      id: variable.id,
      key: variable.key,
      type: variable.type,
      fallback_value: variable.fallback_value,
      created_at: formatTimestamp(new Date(variable.created_at)),
      updated_at: formatTimestamp(new Date(variable.updated_at)),
    })),
    // A template never published has nothing to be ahead of: its status says `draft`.
    has_unpublished_versions: row.published_version_id !== null && row.published_version_id !== row.current_version_id,
  };
}
