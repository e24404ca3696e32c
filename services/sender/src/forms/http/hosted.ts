import { Router, type Response } from 'express';
import { UNSUBSCRIBE_BODY_LIMIT_BYTES } from '@postline/contracts';
import { readFormBody, route, setPublicLinkHeaders, TEAM_HEADER } from '@postline/platform';
import { hostedFormUrl } from '../domain/form-tokens.ts';
import { renderConfirmPage, renderFormPage, renderMessagePage } from '../domain/form-pages.ts';
import {
  askedFields,
  confirmSignup,
  openConfirmation,
  openForm,
  submitSignup,
  type SignupDeps,
} from '../use-cases/signups.ts';
import type { SignupFormRow } from '../../db/schema.ts';

/**
 * A hosted form posts a handful of fields, with room to spare, at most the public links' body limit (the
 * gateway stops a larger one first).
 */
const FORM_LIMITS = { maxBytes: UNSUBSCRIBE_BODY_LIMIT_BYTES, maxFields: 20, maxFieldBytes: 2048 };

/** The path hosted forms are served at, on the public API's address (PUBLIC_BASE_URL). */
export const FORM_PATH = '/f';

const NOT_AVAILABLE = ['Form not available', 'This form does not exist or is not taking signups.'] as const;
const LINK_GONE = ['Link not valid', 'This confirmation link is not valid. Check that it was copied whole.'] as const;
const UNAVAILABLE = [
  'Please try again later',
  'This form cannot take signups right now. Please try again later.',
] as const;

/**
 * A signup form's hosted pages (`/f/{public_id}`), reached through the gateway's public routes without a
 * team: GET is the form, POST its submit (from the page, or from the snippet on the team's own site);
 * `/f/{public_id}/confirm/{token}` is a confirmation link: GET shows a button, POST confirms. Every answer
 * is a page, a refusal too (with its status).
 */
export function hostedFormRoutes(deps: SignupDeps): Router {
  const router = Router();

  route(router, `${FORM_PATH}/:publicId`, {
    get: async (req, res) => {
      const form = await openForm(deps, req.params.publicId ?? '');
      if (!form) return message(res, 404, undefined, NOT_AVAILABLE);
      const token = deps.formTokens.render({ formId: form.id, renderedAt: deps.now() });
      pageHeaders(res, form);
      res.type('text/html; charset=utf-8').send(renderFormPage({ name: form.name, asked: askedFields(form), token }));
    },
    post: async (req, res) => {
      const form = await openForm(deps, req.params.publicId ?? '');
      if (!form) return message(res, 404, undefined, NOT_AVAILABLE);
      const outcome = await submitSignup(deps, form, await readFormBody(req, FORM_LIMITS));
      switch (outcome.kind) {
        case 'taken':
          if (form.redirect_url !== null) {
            pageHeaders(res, form);
            res.redirect(303, form.redirect_url);
            return;
          }
          return message(res, 200, form, ['Thank you', thankYouOf(form)]);
        case 'show': {
          const token = deps.formTokens.render({ formId: form.id, renderedAt: deps.now() });
          pageHeaders(res, form);
          res
            .status(422)
            .type('text/html; charset=utf-8')
            .send(renderFormPage({ name: form.name, asked: askedFields(form), token, ...outcome }));
          return;
        }
        case 'unavailable':
          return message(res, 503, form, UNAVAILABLE);
      }
    },
  });

  route(router, `${FORM_PATH}/:publicId/confirm/:token`, {
    get: async (req, res) => {
      const link = await openConfirmation(deps, req.params.publicId ?? '', req.params.token ?? '');
      if (link.kind === 'gone') return message(res, 404, undefined, LINK_GONE);
      if (link.kind === 'expired') return expired(res, link.form, deps.publicBaseUrl);
      pageHeaders(res, link.form);
      res.type('text/html; charset=utf-8').send(renderConfirmPage(link.form.name));
    },
    post: async (req, res) => {
      await readFormBody(req, FORM_LIMITS); // the button posts nothing; a body that is no form is refused as on submit
      const link = await openConfirmation(deps, req.params.publicId ?? '', req.params.token ?? '');
      if (link.kind === 'gone') return message(res, 404, undefined, LINK_GONE);
      if (link.kind === 'expired') return expired(res, link.form, deps.publicBaseUrl);
      const outcome = await confirmSignup(deps, link.form, link.signupId);
      if (outcome === 'gone') return message(res, 404, undefined, LINK_GONE);
      const title = outcome === 'confirmed' ? 'Subscription confirmed' : 'Already confirmed';
      const text =
        outcome === 'confirmed'
          ? `Thank you: your subscription to ${link.form.name} is confirmed.`
          : `Your subscription to ${link.form.name} was confirmed already. Nothing more to do.`;
      return message(res, 200, link.form, [title, text]);
    },
  });
  return router;
}

function thankYouOf(form: SignupFormRow): string {
  if (form.thank_you_message !== null) return form.thank_you_message;
  return form.double_opt_in
    ? 'Almost done: we sent you an email. Open the link in it to confirm your subscription.'
    : 'Thank you for signing up.';
}

function expired(res: Response, form: SignupFormRow, publicBaseUrl: string): void {
  pageHeaders(res, form);
  res
    .status(410)
    .type('text/html; charset=utf-8')
    .send(
      renderMessagePage('Link expired', 'This confirmation link has expired. Sign up again to get a new one.', {
        alert: true,
        link: { href: hostedFormUrl(publicBaseUrl, form.public_id), text: `Sign up to ${form.name}` },
      }),
    );
}

function message(
  res: Response,
  status: number,
  form: SignupFormRow | undefined,
  [title, text]: readonly [string, string],
): void {
  pageHeaders(res, form);
  res
    .status(status)
    .type('text/html; charset=utf-8')
    .send(renderMessagePage(title, text, { alert: status >= 400 }));
}

/**
 * Our own page: no scripts, no outside resources, no framing, a form that posts only back here (and may be
 * sent on to the form's redirect URL: browsers apply form-action to a submit's redirects); never cached or
 * indexed. The form's team goes to the gateway (which checks it and never passes it on).
 */
function pageHeaders(res: Response, form: SignupFormRow | undefined): void {
  const redirect = form?.redirect_url ? ` ${new URL(form.redirect_url).origin}` : '';
  setPublicLinkHeaders(res, {
    teamId: form?.team_id ?? '',
    contentSecurityPolicy: `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${redirect}; frame-ancestors 'none'; base-uri 'none'`,
  });
  if (!form) res.removeHeader(TEAM_HEADER);
}
