// The rules of templates (as in Resend's API reference): their fields, their declared variables, and what a send
// with `template: {id, variables}` becomes: a plain POST /emails body with the template's content rendered.
import type { TemplateVariable, VariableType } from '@postline/contracts';
import { isUuid, newId } from '@postline/platform/pure';
import { MAX_RECIPIENTS_PER_FIELD, parseMailbox, type TemplateReference, type Refusal } from '../../message/index.ts';
import { renderTemplate } from '@postline/contracts/placeholders';

/** A variable as a create or update declares it (`fallbackValue` already folded into `fallback_value`). */
export type VariableDeclaration = { key: string; type: string; fallback_value: unknown };

/** The versioned part of a template: what a send uses. */
export type TemplateContent = {
  from: string | null;
  subject: string | null;
  replyTo: string[] | null;
  html: string;
  text: string | null;
  variables: TemplateVariable[];
};

export const MAX_TEMPLATE_VARIABLES = 50;
export const TEMPLATE_NAME_MAX = 255;
/** Variable keys: letters, digits and underscores, 1 to 50, case-sensitive. */
export const VARIABLE_KEY = /^[A-Za-z0-9_]{1,50}$/;
/** A string variable's value (given or fallback) is at most 2,000 characters (as Resend's). */
export const MAX_VARIABLE_STRING = 2000;
/**
 * Keys a template may not declare: what broadcasts fill in per recipient (Resend's reserved template variables, plus
 * our own POSTLINE_UNSUBSCRIBE_URL). Compared case-sensitively, as the reference lists them: `first_name` is an
 * ordinary key, `FIRST_NAME` is reserved.
 */
export const RESERVED_VARIABLE_KEYS: readonly string[] = [
  'FIRST_NAME',
  'LAST_NAME',
  'EMAIL',
  'UNSUBSCRIBE_URL',
  'RESEND_UNSUBSCRIBE_URL',
  'POSTLINE_UNSUBSCRIBE_URL',
  'contact',
  'this',
];
/** Aliases: 1 to 128 letters, digits, `-`, `_` and `.`, starting with a letter or digit, never UUID-shaped. */
const ALIAS = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/** The fields of a create or update that have rules beyond their type; absent ones are not checked. */
export type TemplateFieldsToCheck = {
  alias?: string | null | undefined;
  from?: string | null | undefined;
  subject?: string | null | undefined;
  replyTo?: string[] | null | undefined;
  html?: string | undefined;
  text?: string | null | undefined;
  variables?: readonly VariableDeclaration[] | undefined;
};

/** The first reason these fields are refused, if any. */
export function checkTemplateFields(fields: TemplateFieldsToCheck): Refusal | undefined {
  const { alias, from, subject, replyTo, variables } = fields;
  if (typeof alias === 'string' && (!ALIAS.test(alias) || isUuid(alias))) {
    return invalid(
      'Invalid `alias` field: use 1 to 128 letters, digits, `-`, `_` or `.`, starting with a letter or digit (not a UUID).',
    );
  }
  if (typeof from === 'string' && !parseMailbox(from)) {
    return {
      name: 'invalid_parameter',
      message:
        'Invalid `from` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format',
    };
  }
  if (typeof subject === 'string' && (CONTROL.test(subject) || subject.length > 998)) {
    return invalid('Invalid `subject` field: at most 998 characters, without line breaks or control characters.');
  }
  if (replyTo) {
    if (replyTo.length > MAX_RECIPIENTS_PER_FIELD) {
      return invalid(`Invalid \`reply_to\` field: at most ${MAX_RECIPIENTS_PER_FIELD} addresses are allowed.`);
    }
    if (replyTo.some((address) => !parseMailbox(address))) {
      return invalid(
        'Invalid `reply_to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.',
      );
    }
  }
  for (const [field, value] of [
    ['html', fields.html],
    ['text', fields.text],
    ['subject', subject],
  ] as const) {
    if (typeof value === 'string' && value.includes('\0')) {
      return invalid(`Invalid \`${field}\` field: it must not contain NUL characters.`);
    }
  }
  return variables === undefined ? undefined : checkVariables(variables);
}

function checkVariables(variables: readonly VariableDeclaration[]): Refusal | undefined {
  if (variables.length > MAX_TEMPLATE_VARIABLES) {
    return invalid(`Invalid \`variables\` field: a template has at most ${MAX_TEMPLATE_VARIABLES} variables.`);
  }
  const reserved = [...new Set(variables.map((v) => v.key).filter((key) => RESERVED_VARIABLE_KEYS.includes(key)))];
  if (reserved.length > 0) {
    const names = reserved.map((key) => `\`${key}\``).join(', ');
    return invalid(
      `Invalid \`variables\` field: ${names} ${reserved.length === 1 ? 'is a reserved key' : 'are reserved keys'} and cannot be declared.`,
    );
  }
  const seen = new Set<string>();
  for (const variable of variables) {
    const { key, type, fallback_value: fallback } = variable;
    if (!VARIABLE_KEY.test(key)) {
      return invalid(`Invalid variable key ${JSON.stringify(key)}: use 1 to 50 letters, digits or underscores.`);
    }
    if (seen.has(key)) return invalid(`Invalid \`variables\` field: the key \`${key}\` is declared twice.`);
    seen.add(key);
    if (type !== 'string' && type !== 'number') {
      return invalid(`Invalid type of variable \`${key}\`: it must be \`string\` or \`number\`.`);
    }
    if (fallback !== null && fallback !== undefined) {
      const wrong = checkValue(type, fallback);
      if (wrong) return invalid(`Invalid \`fallback_value\` of variable \`${key}\`: ${wrong}`);
    }
  }
  return undefined;
}

/**
 * The variables of a new version: each declared key keeps the id and creation time it had in `previous`,
 * and its update time unless its type or fallback changed.
 */
export function versionVariables(
  declared: readonly VariableDeclaration[],
  previous: readonly TemplateVariable[],
  now: Date,
): TemplateVariable[] {
  const at = now.toISOString();
  return declared.map((variable) => {
    const type = variable.type as VariableType;
    const fallback = (variable.fallback_value ?? null) as string | number | null;
    const before = previous.find((old) => old.key === variable.key);
    if (!before)
      return { id: newId(), key: variable.key, type, fallback_value: fallback, created_at: at, updated_at: at };
    const changed = before.type !== type || before.fallback_value !== fallback;
    return { ...before, type, fallback_value: fallback, updated_at: changed ? at : before.updated_at };
  });
}

/** A copy of variables with identities of their own (a duplicated template's). */
export function copiedVariables(variables: readonly TemplateVariable[], now: Date): TemplateVariable[] {
  const at = now.toISOString();
  return variables.map((variable) => ({ ...variable, id: newId(), created_at: at, updated_at: at }));
}

/** A duplicate's name. */
export function duplicateName(name: string): string {
  return `${name} (copy)`.slice(0, TEMPLATE_NAME_MAX);
}

export type RenderedSend = { ok: true; body: Record<string, unknown> } | { ok: false; refusal: Refusal };

/**
 * A POST /emails body (one batch item) with `template` replaced by the template's published content:
 * `from`, `subject` and `reply_to` from the template unless the body gives them, `html` and `text` rendered
 * with the request's variables (HTML-escaped in `html` only), else the declared fallback, else the
 * placeholder's own fallback. A variable with none of these, or a value of the wrong type, is refused
 * naming it. The template's subject is rendered too (unescaped); a subject the body gives is sent as is.
 */
export function renderTemplateSend(
  body: Record<string, unknown>,
  reference: TemplateReference,
  content: TemplateContent,
): RenderedSend {
  const given = reference.variables;
  for (const [key, value] of Object.entries(given)) {
    const declared = content.variables.find((variable) => variable.key === key);
    const wrong = checkValue(declared?.type, value);
    if (wrong) return { ok: false, refusal: invalid(`Invalid value of template variable \`${key}\`: ${wrong}`) };
  }
  const { subject: _subject, template: _template, ...rest } = body;
  const useTemplateSubject = !present(body.subject);
  const rendered = renderTemplate(
    { html: content.html, text: content.text, subject: useTemplateSubject ? content.subject : null },
    content.variables,
    given,
  );
  const { missing } = rendered;
  if (missing.length > 0) {
    const names = missing.map((key) => `\`${key}\``).join(', ');
    return {
      ok: false,
      refusal: invalid(
        `Missing template ${missing.length === 1 ? 'variable' : 'variables'} ${names}: give ${missing.length === 1 ? 'it' : 'them'} in \`template.variables\` or declare a \`fallback_value\`.`,
      ),
    };
  }
  return {
    ok: true,
    body: {
      ...rest,
      from: present(body.from) ? body.from : content.from,
      subject: useTemplateSubject ? rendered.subject : body.subject,
      reply_to: present(body.reply_to) ? body.reply_to : content.replyTo,
      html: rendered.html,
      text: rendered.text,
    },
  };
}

/** Why `value` is not a valid value of a variable of `type` (any string or number when undeclared). */
function checkValue(type: string | undefined, value: unknown): string | undefined {
  if (typeof value === 'string') {
    if (type === 'number') return 'it must be a number.';
    if (value.length > MAX_VARIABLE_STRING) return `it must be at most ${MAX_VARIABLE_STRING} characters.`;
    if (value.includes('\0')) return 'it must not contain NUL characters.';
    return undefined;
  }
  if (typeof value === 'number') {
    if (type === 'string') return 'it must be a string.';
    if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) {
      return `it must be a number between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}.`;
    }
    return undefined;
  }
  return type === undefined ? 'it must be a string or a number.' : `it must be a ${type}.`;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function invalid(message: string): Refusal {
  return { name: 'validation_error', message };
}
