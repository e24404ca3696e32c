// The catalog's template versions (Postline's own): a template's history, one version, and reverting to one.
import * as rs from './shapes.ts';
import { created, get, list, ok, post, type Operation } from './operation.ts';

const TEMPLATE = 'The template id or alias.';

export const TEMPLATE_VERSION_OPERATIONS: Operation[] = [
  list('/templates/{id}/versions', 'Templates', "List a template's versions", rs.TemplateVersionList, {
    extension:
      'Version history: newest first, each with who last wrote it (a dashboard user or an API key), whether it is the current or the published version, and its subject.',
    params: { id: TEMPLATE },
    errors: ['not_found', 'validation_error'],
  }),
  get('/templates/{id}/versions/{version_id}', 'Templates', 'Retrieve a template version', {
    extension: 'Version history: one version of a template, its whole content.',
    params: { id: TEMPLATE },
    success: ok(rs.TemplateVersion),
    errors: ['not_found'],
  }),
  post('/templates/{id}/versions/{version_id}/revert', 'Templates', 'Revert a template to a version', {
    extension:
      'Starts a new current (draft) version copied from this one; the published version keeps sending until the next publish.',
    params: { id: TEMPLATE },
    success: created(rs.TemplateVersion),
    errors: ['not_found'],
  }),
];
