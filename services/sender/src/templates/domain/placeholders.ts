// Triple-brace placeholders, as templates and broadcasts write them: `{{{KEY}}}` or `{{{KEY|fallback}}}`,
// where KEY is letters, digits, underscores and dots (`PRODUCT`, `contact.first_name`). The fallback is
// the text up to the closing braces, taken as it is (it is the author's own markup, never escaped).

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
