// The editor's variables as rows of a table (key, type, fallback, and a sample value for the preview and a
// test send), and what the template becomes with them: the server's own rule (@postline/contracts'
// renderTemplate), so the preview shows what a send with these values would.
import { renderTemplate, type RenderedTemplate } from '@postline/contracts/placeholders';

export type VariableType = 'string' | 'number';
export type VariableRow = { key: string; type: VariableType; fallback: string; sample: string };

/** A value typed in a field, as a variable of `type` takes it: a number variable's numeric text as a number. */
function typed(type: VariableType, value: string): string | number {
  if (type === 'number' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return value;
}

/** A row's fallback as the API takes it: none when the field is empty. */
export function fallbackValue(row: VariableRow): string | number | null {
  return row.fallback === '' ? null : typed(row.type, row.fallback);
}

/** The variables a send gives: each row's sample; an empty sample gives nothing, so the fallback shows. */
export function sampleValues(rows: readonly VariableRow[]): Record<string, string | number> {
  return Object.fromEntries(
    rows.filter((row) => row.key !== '' && row.sample !== '').map((row) => [row.key, typed(row.type, row.sample)]),
  );
}

/** The template's HTML, text and subject rendered with the rows' samples and fallbacks. */
export function renderWithSamples(
  content: { html: string; text: string; subject: string },
  rows: readonly VariableRow[],
): RenderedTemplate {
  return renderTemplate(
    { html: content.html, text: content.text === '' ? null : content.text, subject: content.subject || null },
    rows.filter((row) => row.key !== '').map((row) => ({ key: row.key, fallback_value: fallbackValue(row) })),
    sampleValues(rows),
  );
}
