// Helpers for list filters over tables keyed by UUIDv7 ids (time-ordered): a time bound as an id bound, so a
// filter by time reads a range of a (team_id, id) index; and LIKE patterns that match text literally.

/** The smallest UUIDv7 made at `ms`: every id made then or later sorts at or after it. */
export function firstIdAt(ms: number): string {
  const hex = Math.max(0, Math.min(ms, 2 ** 48 - 1))
    .toString(16)
    .padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`;
}

/** The text matched literally by LIKE (whose escape character is Postgres's default, the backslash). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
