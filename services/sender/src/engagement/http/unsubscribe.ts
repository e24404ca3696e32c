import busboy from 'busboy';
import { Router, type Request, type Response } from 'express';
import { UNSUBSCRIBE_BODY_LIMIT_BYTES } from '@postline/contracts';
import { ApiError, route, setPublicLinkHeaders, validationError } from '@postline/platform';
import { ONE_CLICK_ANSWER, parseUnsubscribeRequest, renderPreferencePage } from '../domain/preference-page.ts';
import { UNSUBSCRIBE_PATH } from '../domain/unsubscribe-links.ts';
import { refusalError } from '../../message/index.ts';
import {
  openUnsubscribeLink,
  readPreferences,
  savePreferences,
  unsubscribeOneClick,
  type UnsubscribeDeps,
} from '../use-cases/unsubscribe.ts';

/** Fields a form may carry: the page's topics, `form` and `unsubscribe_all`, with room to spare. */
const MAX_FORM_FIELDS = 200;
const MAX_FIELD_BYTES = 1024;

/**
 * A broadcast recipient's unsubscribe link (`/unsubscribe/{token}`), reached through the gateway's public
 * routes without a team: GET is the preference page (it never changes anything: scanners fetch links), POST
 * is either the RFC 8058 one-click unsubscribe (`List-Unsubscribe=One-Click`, urlencoded or multipart, as
 * Gmail and Yahoo send it: answered 200 with a short text, no redirect) or the page's form (answered with
 * the page again and a confirmation).
 */
export function unsubscribeRoutes(deps: UnsubscribeDeps): Router {
  const router = Router();

  route(router, `${UNSUBSCRIBE_PATH}/:token`, {
    get: async (req, res) => {
      const link = openUnsubscribeLink(deps, req.params.token ?? '');
      const preferences = await readPreferences(deps, link);
      pageHeaders(res, link.teamId);
      res.type('text/html; charset=utf-8').send(renderPreferencePage(preferences, { saved: false }));
    },
    post: async (req, res) => {
      const link = openUnsubscribeLink(deps, req.params.token ?? '');
      const parsed = parseUnsubscribeRequest(await readForm(req));
      if (!parsed.ok) throw refusalError(parsed.refusal);
      if (parsed.request.kind === 'one-click') {
        await unsubscribeOneClick(deps, link);
        pageHeaders(res, link.teamId);
        res.type('text/plain; charset=utf-8').send(ONE_CLICK_ANSWER);
        return;
      }
      const preferences = await savePreferences(deps, link, parsed.request);
      pageHeaders(res, link.teamId);
      res.type('text/html; charset=utf-8').send(renderPreferencePage(preferences, { saved: true }));
    },
  });
  return router;
}

/**
 * Our own page: no scripts, no outside resources, no framing, a form that posts only back here; never cached
 * or indexed. The link's team goes to the gateway (which checks it and never passes it on).
 */
function pageHeaders(res: Response, teamId: string): void {
  setPublicLinkHeaders(res, {
    teamId,
    contentSecurityPolicy:
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  });
}

/**
 * The fields of an urlencoded or multipart/form-data body (the last of a name winning; files ignored), at
 * most UNSUBSCRIBE_BODY_LIMIT_BYTES (the gateway stops a larger one first). Any other body is refused.
 */
async function readForm(req: Request): Promise<Record<string, string>> {
  if (!req.is(['application/x-www-form-urlencoded', 'multipart/form-data'])) {
    throw new ApiError(
      415,
      'validation_error',
      'The body must be application/x-www-form-urlencoded or multipart/form-data.',
    );
  }
  if (Number(req.header('content-length') ?? 0) > UNSUBSCRIBE_BODY_LIMIT_BYTES) {
    throw new ApiError(413, 'validation_error', 'The request body is too large.');
  }
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    let form: busboy.Busboy;
    try {
      form = busboy({
        headers: req.headers,
        limits: { fields: MAX_FORM_FIELDS, fieldSize: MAX_FIELD_BYTES, files: 0, parts: MAX_FORM_FIELDS },
      });
    } catch {
      reject(validationError('The form body could not be read.'));
      return;
    }
    form.on('field', (name, value) => {
      fields[name] = value;
    });
    form.on('file', (_name, stream) => stream.resume());
    form.on('close', () => resolve(fields));
    form.on('error', () => reject(validationError('The form body could not be read.')));
    req.on('error', () => reject(new ApiError(400, 'validation_error', 'The request was aborted.')));
    req.pipe(form);
  });
}
