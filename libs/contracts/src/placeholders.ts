// Triple-brace placeholders, as templates and broadcasts write them: `{{{KEY}}}` or `{{{KEY|fallback}}}`,
// where KEY is letters, digits, underscores and dots (`PRODUCT`, `contact.first_name`). The fallback is
// the text up to the closing braces, taken as it is (it is the author's own markup, never escaped).
// One rule for the sender (template sends, broadcasts) and the dashboard's template preview: a module of its
// own, without zod, so that the dashboard can import it (`@postline/contracts/placeholders`).

const PLACEHOLDER = /\{\{\{\s*([A-Za-z0-9_.]+)\s*(?:\|([^}]*))?\}\}\}/g;

export type PlaceholderValue = string | number;

/** A placeholder in a text: its key and its fallback (undefined when it has none). */
export type Placeholder = { key: string; fallback: string | undefined };

/** Every placeholder in `text`, in order (a key may come more than once). */
export function placeholdersOf(text: string): Placeholder[] {
  return [...text.matchAll(PLACEHOLDER)].map((match) => ({ key: match[1]!, fallback: match[2] }));
}

export type Rendered = { text: string; missing: string[] };

/**
 * `text` with each placeholder replaced by `valueOf(key)`, else its own fallback, else nothing; the keys
 * that had neither are listed in `missing` (each once) so that the caller decides whether that is an error
 * (a template send) or an empty value (a broadcast to a contact without a last name). Values are
 * HTML-escaped when `html` is set; fallbacks never are.
 */
export function renderPlaceholders(
  text: string,
  valueOf: (key: string) => PlaceholderValue | null | undefined,
  options: { html: boolean },
): Rendered {
  const missing = new Set<string>();
  const rendered = text.replace(PLACEHOLDER, (_whole, key: string, fallback: string | undefined) => {
    const value = valueOf(key);
    if (value !== undefined && value !== null && value !== '') {
      return options.html ? escapeHtml(String(value)) : String(value);
    }
    if (fallback !== undefined) return fallback;
    missing.add(key);
    return '';
  });
  return { text: rendered, missing: [...missing] };
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!);
}

/** A template's declared variable, as far as rendering needs it. */
export type DeclaredVariable = { key: string; fallback_value: PlaceholderValue | null };

/** The parts of a template that carry placeholders (null: the template has none of that part). */
export type TemplateParts = { html: string; text: string | null; subject: string | null };

export type RenderedTemplate = { html: string; text: string | null; subject: string | null; missing: string[] };

/**
 * A template's parts rendered as a send with `template.variables` renders them: each placeholder takes the
 * value given for its key, else the variable's declared `fallback_value`, else the placeholder's own
 * fallback; values are HTML-escaped in `html` only. `missing` names the keys that have none of these (a
 * value given as "" is a value, an empty one): a send refuses them, a preview shows them empty.
 *
 * @example
 * renderTemplate({ html: '<p>Hi {{{NAME}}}</p>', text: null, subject: 'For {{{NAME}}}' },
 *   [{ key: 'NAME', fallback_value: 'friend' }], {});
 * // { html: '<p>Hi friend</p>', text: null, subject: 'For friend', missing: [] }
 */
export function renderTemplate(
  parts: TemplateParts,
  declared: readonly DeclaredVariable[],
  given: Readonly<Record<string, unknown>>,
): RenderedTemplate {
  const valueOf = (key: string): PlaceholderValue | null | undefined => {
    const value = given[key] as PlaceholderValue | null | undefined;
    if (value !== undefined && value !== null) return value;
    return declared.find((variable) => variable.key === key)?.fallback_value;
  };
  const html = renderPlaceholders(parts.html, valueOf, { html: true });
  const text = parts.text === null ? null : renderPlaceholders(parts.text, valueOf, { html: false });
  const subject = parts.subject === null ? null : renderPlaceholders(parts.subject, valueOf, { html: false });
  const missing = [...new Set([...html.missing, ...(text?.missing ?? []), ...(subject?.missing ?? [])])].filter(
    (key) => given[key] !== '',
  );
  return { html: html.text, text: text?.text ?? null, subject: subject?.text ?? null, missing };
}

/**
 * `text` with only the declared variables' placeholders filled (each with its variable's `fallback_value`,
 * else the placeholder's own fallback, else nothing), every other placeholder left as written: a template
 * made a broadcast's message keeps its contact placeholders (`{{{contact.first_name}}}`, the unsubscribe
 * link) for each contact, while its own variables, which no broadcast gives values for, take their
 * fallbacks. Values are HTML-escaped when `html` is set.
 *
 * @example
 * fillDeclaredVariables('{{{PRODUCT}}} for {{{contact.first_name|you}}}', [{ key: 'PRODUCT', fallback_value: 'Acme' }], { html: false });
 * // 'Acme for {{{contact.first_name|you}}}'
 */
export function fillDeclaredVariables(
  text: string,
  declared: readonly DeclaredVariable[],
  options: { html: boolean },
): string {
  return text.replace(PLACEHOLDER, (whole: string, key: string, fallback: string | undefined) => {
    const variable = declared.find((candidate) => candidate.key === key);
    if (!variable) return whole;
    const value = variable.fallback_value;
    if (value !== null && value !== '') return options.html ? escapeHtml(String(value)) : String(value);
    return fallback ?? '';
  });
}
