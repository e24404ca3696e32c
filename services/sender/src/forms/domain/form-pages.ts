// The hosted form's pages, plain HTML that works without JavaScript or any outside resource (a strict CSP
// allows neither): the form, its answers (thank-you, confirmation, errors), and the snippet a team copies to
// put the same form on its own site. Everything a team or a visitor wrote is escaped.
import type { FormField } from '@postline/contracts';
import { escapeHtml } from '../../templates/index.ts';
import { HONEYPOT_FIELD, RENDER_FIELD, type FieldErrors } from './signup-rules.ts';

const LABELS: Record<'email' | FormField, string> = {
  email: 'Email',
  first_name: 'First name',
  last_name: 'Last name',
};
const AUTOCOMPLETE: Record<'email' | FormField, string> = {
  email: 'email',
  first_name: 'given-name',
  last_name: 'family-name',
};

const STYLE = `body{font-family:system-ui,sans-serif;line-height:1.5;margin:0;padding:1rem;color:#1a1a1a;background:#fff}
main{max-width:30rem;margin:2rem auto}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input{font:inherit;box-sizing:border-box;width:100%;padding:.5rem;border:1px solid #6b6b6b;border-radius:4px}
input[aria-invalid=true]{border:2px solid #b3261e}
.error{color:#b3261e;margin:.25rem 0 0}
.alert{border:2px solid #b3261e;border-radius:4px;padding:.5rem 1rem;background:#fdeceb}
.status{border:2px solid #1e7d32;border-radius:4px;padding:.5rem 1rem;background:#edf7ee}
.trap{position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden}
button{font:inherit;margin-top:1rem;padding:.5rem 1.25rem;border:2px solid #1a1a1a;border-radius:4px;background:#1a1a1a;color:#fff;cursor:pointer}
button:focus,input:focus{outline:3px solid #1565c0;outline-offset:2px}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
${STYLE}
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export type FormPage = {
  name: string;
  asked: readonly FormField[];
  /** The render token of this showing. */
  token: string;
  values?: Readonly<Record<string, string>>;
  errors?: FieldErrors;
  /** Said above the form (why it is shown again). */
  notice?: string;
};

/** The hosted form; with `errors`, each next to its field and summed up at the top (an alert). */
export function renderFormPage(form: FormPage): string {
  const errors = form.errors ?? {};
  const wrong = Object.keys(errors).length > 0;
  const summary = wrong
    ? `<div class="alert" role="alert"><p>Please correct the form:</p><ul>${Object.entries(errors)
        .map(([field, message]) => `<li><a href="#${field}">${escapeHtml(message)}</a></li>`)
        .join('')}</ul></div>\n`
    : '';
  const notice = form.notice ? `<p class="status" role="status">${escapeHtml(form.notice)}</p>\n` : '';
  const fields = (['email', ...form.asked] as const).map((field) => fieldHtml(field, form.values, errors)).join('\n');
  return page(
    form.name,
    `<h1>${escapeHtml(form.name)}</h1>
${summary}${notice}<form method="post" novalidate>
${fields}
${trapHtml('')}
<input type="hidden" name="${RENDER_FIELD}" value="${escapeHtml(form.token)}">
<button type="submit">Subscribe</button>
</form>`,
  );
}

function fieldHtml(
  field: 'email' | FormField,
  values: Readonly<Record<string, string>> | undefined,
  errors: FieldErrors,
): string {
  const error = errors[field];
  const required = field === 'email';
  const attributes = [
    `id="${field}"`,
    `name="${field}"`,
    `type="${field === 'email' ? 'email' : 'text'}"`,
    `autocomplete="${AUTOCOMPLETE[field]}"`,
    `value="${escapeHtml(values?.[field] ?? '')}"`,
    ...(required ? ['required'] : []),
    ...(error ? ['aria-invalid="true"', `aria-describedby="${field}-error"`] : []),
  ];
  const label = `${LABELS[field]}${required ? '' : ' (optional)'}`;
  return `<label for="${field}">${label}</label>
<input ${attributes.join(' ')}>${error ? `\n<p class="error" id="${field}-error">${escapeHtml(error)}</p>` : ''}`;
}

/** The honeypot, off-screen, out of the tab order and hidden from assistive technology. */
function trapHtml(idPrefix: string): string {
  const id = `${idPrefix}${HONEYPOT_FIELD}`;
  return `<div class="trap" aria-hidden="true"><label for="${id}">Leave this field empty</label><input id="${id}" name="${HONEYPOT_FIELD}" type="text" tabindex="-1" autocomplete="off" value=""></div>`;
}

/** A page that only says something: a thank-you, a confirmation, or why the form cannot be used. */
export function renderMessagePage(
  title: string,
  message: string,
  options: { alert?: boolean; link?: { href: string; text: string } } = {},
): string {
  const role = options.alert ? 'alert' : 'status';
  const link = options.link
    ? `\n<p><a href="${escapeHtml(options.link.href)}">${escapeHtml(options.link.text)}</a></p>`
    : '';
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p role="${role}">${escapeHtml(message)}</p>${link}`);
}

/**
 * A confirmation link's page: one button that confirms (a POST). Opening the link confirms nothing, as mail
 * scanners open links before people do: a scanner must not be able to sign anyone up.
 */
export function renderConfirmPage(formName: string): string {
  return page(
    'Confirm your subscription',
    `<h1>Confirm your subscription</h1>
<p>Press the button to confirm your subscription to <strong>${escapeHtml(formName)}</strong>.</p>
<form method="post">
<button type="submit">Confirm my subscription</button>
</form>`,
  );
}

/**
 * The HTML a team copies onto its own site: a plain form that posts to the hosted form, with the same fields
 * and the honeypot, no script and no style sheet (the honeypot is kept off-screen by an inline style).
 */
export function embedSnippet(hostedUrl: string, asked: readonly FormField[]): string {
  const input = (field: 'email' | FormField) => {
    const id = `postline-${field.replace('_', '-')}`;
    const type = field === 'email' ? 'email' : 'text';
    const required = field === 'email' ? ' required' : '';
    return `  <label for="${id}">${LABELS[field]}</label>
  <input id="${id}" name="${field}" type="${type}" autocomplete="${AUTOCOMPLETE[field]}"${required}>`;
  };
  return `<form action="${escapeHtml(hostedUrl)}" method="post" accept-charset="utf-8">
${(['email', ...asked] as const).map(input).join('\n')}
  <div style="position:absolute;left:-10000px" aria-hidden="true">
    <label for="postline-${HONEYPOT_FIELD}">Leave this field empty</label>
    <input id="postline-${HONEYPOT_FIELD}" name="${HONEYPOT_FIELD}" type="text" tabindex="-1" autocomplete="off">
  </div>
  <button type="submit">Subscribe</button>
</form>
`;
}
