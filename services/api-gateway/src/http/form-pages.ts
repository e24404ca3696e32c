// The gateway's own answers on a signup form's hosted pages (a refusal before the owner is asked: too many
// submits, a disabled team, the owner away): pages for a person, as the owner's answers are, not JSON.
import type { Response } from 'express';
import type { ApiError } from '@postline/platform';

const TITLES: Record<number, string> = {
  404: 'Form not available',
  429: 'Too many attempts',
  503: 'Please try again later',
};

/** The statuses answered with a page; others (405, a body that is no form) stay the API's JSON errors. */
export function isPageRefusal(err: ApiError): boolean {
  return err.statusCode in TITLES;
}

export function sendRefusalPage(res: Response, err: ApiError): void {
  const title = TITLES[err.statusCode] ?? 'Error';
  const escape = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  res
    .status(err.statusCode)
    .set({
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'private, no-store',
      'x-robots-tag': 'noindex',
    })
    .type('text/html; charset=utf-8').send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escape(title)}</title>
<style>body{font-family:system-ui,sans-serif;line-height:1.5;margin:0;padding:1rem;color:#1a1a1a;background:#fff}main{max-width:30rem;margin:2rem auto}</style>
</head>
<body>
<main>
<h1>${escape(title)}</h1>
<p role="alert">${escape(err.message)}</p>
</main>
</body>
</html>
`);
}
