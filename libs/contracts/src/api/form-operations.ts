// The catalog's signup forms (a Postline extension): the form resource behind a full-access key or a
// session, and the hosted pages a form is filled in on, key-less (the form's public id is the credential).
import * as rq from './requests.ts';
import * as rs from './shapes.ts';
import { del, get, json, list, ok, patch, post, type Operation } from './operation.ts';

const EXTENSION =
  'Signup forms: a hosted, key-less form that adds a contact to chosen segments and topics, with double opt-in.';

const GONE = { status: 404, description: 'A page: no such form, or it is disabled (or the link was altered).' };
const LIMITED = { status: 429, description: 'A page: too many submits from this address or to this form.' };
const UNAVAILABLE = { status: 503, description: 'A page: the form cannot take signups now.' };

export const FORM_OPERATIONS: Operation[] = [
  post('/forms', 'Signup Forms', 'Create a signup form', {
    extension: EXTENSION,
    body: { schema: rq.CreateFormBody, required: true },
    success: { status: 201, schema: rs.Form },
    errors: ['validation_error', 'missing_required_field'],
  }),
  list('/forms', 'Signup Forms', 'List signup forms', rs.FormList, { extension: EXTENSION }),
  get('/forms/{form_id}', 'Signup Forms', 'Retrieve a signup form', {
    extension: EXTENSION,
    success: ok(rs.Form),
    errors: ['not_found'],
  }),
  patch('/forms/{form_id}', 'Signup Forms', 'Update a signup form', {
    extension: EXTENSION,
    body: json(rq.UpdateFormBody),
    success: ok(rs.Form),
    errors: ['not_found', 'validation_error'],
  }),
  del('/forms/{form_id}', 'Signup Forms', 'Delete a signup form', {
    extension: EXTENSION,
    success: ok(rs.deleted('form')),
    errors: ['not_found'],
  }),
  ...hostedPages(),
];

/**
 * A hosted page: HTML for a person, whatever the outcome (a refusal is a page too, with its status), but a
 * path not of a form's shape (then the gateway asks for an API key) and a body it cannot read (JSON errors).
 */
function hostedPage(
  method: 'get' | 'post',
  path: string,
  summary: string,
  description: string,
  also: { status: number; description: string }[],
  extra: Partial<Operation> = {},
): Operation {
  return {
    method,
    path,
    tag: 'Signup Forms',
    summary,
    auth: 'none',
    extension: 'A page Postline serves without an API key; the form’s public id names the form.',
    success: { status: 200, contentType: 'text/html', description, also },
    errors: ['missing_api_key', 'invalid_api_key'],
    params: {
      public_id: "The form's public id.",
      ...(path.includes('{token}') ? { token: 'The signed token of the confirmation link.' } : {}),
    },
    ...extra,
  };
}

function hostedPages(): Operation[] {
  const page = { contentType: 'application/x-www-form-urlencoded' };
  return [
    hostedPage('get', '/f/{public_id}', 'A hosted signup form', 'The form.', [GONE, LIMITED, UNAVAILABLE]),
    hostedPage(
      'post',
      '/f/{public_id}',
      'Submit a signup form',
      'The thank-you page (also for a submit the bot trap caught, which creates nothing).',
      [
        { status: 303, description: "A redirect to the form's redirect_url." },
        GONE,
        { status: 422, description: 'The form again, with what to correct; nothing was written.' },
        LIMITED,
        UNAVAILABLE,
      ],
      {
        body: { schema: rq.FormSubmission, ...page, required: true },
      },
    ),
    hostedPage('get', '/f/{public_id}/confirm/{token}', "A signup's confirmation page", 'A button that confirms.', [
      GONE,
      { status: 410, description: 'A page: the link expired; signing up again sends a new one.' },
      LIMITED,
      UNAVAILABLE,
    ]),
    hostedPage(
      'post',
      '/f/{public_id}/confirm/{token}',
      'Confirm a signup',
      'The confirmed page (also when it was confirmed before: nothing changes).',
      [
        GONE,
        { status: 410, description: 'A page: the link expired; signing up again sends a new one.' },
        LIMITED,
        UNAVAILABLE,
      ],
      {
        body: { schema: rq.FormConfirmation, ...page },
      },
    ),
  ];
}
