/**
 * Resource bodies carry Postgres-style timestamps, as the reference API does: `2023-10-06 23:47:56.678+00`
 * (webhook payloads use ISO 8601 instead).
 */
export function formatTimestamp(date: Date): string {
  return `${date.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}
