import { Router } from 'express';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import type { FormField } from '@postline/contracts';
import { hostedFormUrl } from '../domain/form-tokens.ts';
import { embedSnippet } from '../domain/form-pages.ts';
import { askedFields } from '../use-cases/signups.ts';
import {
  changeForm,
  createForm,
  deleteTeamForm,
  getForm,
  pageOfForms,
  type FormDeps,
  type FormWithCounts,
} from '../use-cases/forms.ts';

export type FormRouteDeps = FormDeps & { publicBaseUrl: string };

const { CreateFormBody, UpdateFormBody } = ApiRequests;

/** The signup forms resource (a Postline extension), behind a full-access key or a session. */
export function formRoutes(deps: FormRouteDeps): Router {
  const router = Router();
  const item = (found: FormWithCounts) => formItem(found, deps.publicBaseUrl);
  route(router, '/forms', {
    post: async (req, res) => {
      const body = parseInput(CreateFormBody, req.body);
      res.status(201).json({ object: 'form', ...item(await createForm(deps, teamOf(res), body)) });
    },
    get: async (req, res) => {
      const page = await pageOfForms(deps, teamOf(res), parseInput(PaginationQuery, req.query));
      res.json({ ...page, data: page.data.map(item) });
    },
  });
  route(router, '/forms/:id', {
    get: async (req, res) => {
      res.json({ object: 'form', ...item(await getForm(deps, teamOf(res), req.params.id ?? '')) });
    },
    patch: async (req, res) => {
      const body = parseInput(UpdateFormBody, req.body);
      res.json({ object: 'form', ...item(await changeForm(deps, teamOf(res), req.params.id ?? '', body)) });
    },
    delete: async (req, res) => {
      const form = await deleteTeamForm(deps, teamOf(res), req.params.id ?? '');
      res.json({ object: 'form', id: form.id, deleted: true });
    },
  });
  return router;
}

function formItem({ form, counts }: FormWithCounts, publicBaseUrl: string) {
  const hostedUrl = hostedFormUrl(publicBaseUrl, form.public_id);
  const fields: FormField[] = askedFields(form);
  return {
    id: form.id,
    public_id: form.public_id,
    name: form.name,
    segment_ids: form.segment_ids,
    topic_ids: form.topic_ids,
    fields,
    double_opt_in: form.double_opt_in,
    from: form.from_header,
    subject: form.subject,
    redirect_url: form.redirect_url,
    thank_you_message: form.thank_you_message,
    enabled: form.enabled,
    hosted_url: hostedUrl,
    embed_html: embedSnippet(hostedUrl, fields),
    counts: { submissions: Number(form.submissions), pending: counts.pending, confirmed: counts.confirmed },
    created_at: formatTimestamp(form.created_at),
    updated_at: formatTimestamp(form.updated_at),
  };
}
