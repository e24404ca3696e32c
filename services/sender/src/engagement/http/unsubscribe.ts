import { Router, type Response } from 'express';
import { UNSUBSCRIBE_BODY_LIMIT_BYTES } from '@postline/contracts';
import { readFormBody, route, setPublicLinkHeaders } from '@postline/platform';
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

/**
 * The preference page's form: its topics, `form` and `unsubscribe_all`, with room to spare, at most the
 * public links' body limit (the gateway stops a larger one first).
 */
const FORM_LIMITS = { maxBytes: UNSUBSCRIBE_BODY_LIMIT_BYTES, maxFields: 200, maxFieldBytes: 1024 };

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
      const parsed = parseUnsubscribeRequest(await readFormBody(req, FORM_LIMITS));
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
