// The catalog's key-less routes: the signed links (share pages, downloads, unsubscribe, tracking).
import * as rq from './requests.ts';
import type { HttpMethod, Operation } from './operation.ts';

function publicLink(
  method: HttpMethod,
  path: string,
  summary: string,
  success: Operation['success'],
  extra: Partial<Operation> = {},
): Operation {
  return {
    method,
    path,
    tag: 'Public Links',
    summary,
    auth: 'none',
    extension: 'A link Postline issues and serves without an API key; the signed token names what it serves.',
    success,
    // A token not of the link's shape is no public link: the gateway asks for an API key.
    errors: ['not_found', 'missing_api_key', 'invalid_api_key', 'rate_limit_exceeded', 'service_unavailable'],
    params: { token: 'The signed token of the link.' },
    ...extra,
  };
}

export function publicLinks(): Operation[] {
  const file = { status: 200, contentType: 'application/octet-stream', description: 'The file, as a download.' };
  return [
    publicLink('get', '/share/{token}', "A shared email's content", {
      status: 200,
      contentType: 'text/html',
      description: "The email's HTML (or its text), sandboxed.",
    }),
    publicLink('get', '/downloads/{token}', "Download a sent email's attachment", file),
    publicLink('get', '/inbound/{token}', "Download a received email's raw message or attachment", file),
    publicLink('get', '/o/{token}', 'Open-tracking pixel', {
      status: 200,
      contentType: 'image/gif',
      description: 'A 1×1 GIF; the open is recorded.',
    }),
    publicLink('get', '/c/{token}', 'Click-tracking redirect', {
      status: 302,
      description: 'A redirect to the link; the click is recorded.',
      headers: { location: 'The original link.' },
    }),
    publicLink('get', '/unsubscribe/{token}', "A broadcast recipient's preference page", {
      status: 200,
      contentType: 'text/html',
      description: 'The preference page: unsubscribe, or choose topics.',
    }),
    publicLink(
      'post',
      '/unsubscribe/{token}',
      'Unsubscribe (RFC 8058 one-click) or save the preference form',
      { status: 200, contentType: 'text/html', description: 'The preference page, updated.' },
      {
        body: { schema: rq.UnsubscribeForm, contentType: 'application/x-www-form-urlencoded' },
        errors: [
          'not_found',
          'missing_api_key',
          'invalid_api_key',
          'validation_error',
          'validation_error@413',
          'rate_limit_exceeded',
          'service_unavailable',
        ],
      },
    ),
  ];
}
