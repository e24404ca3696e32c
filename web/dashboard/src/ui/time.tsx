// Timestamps as the API answers them ("2026-01-02 03:04:05.678+00" or ISO 8601), shown in the reader's
// time zone, with the exact UTC instant on hover.
export function parseTimestamp(value: string): Date {
  const iso = value.includes('T') ? value : value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  return new Date(iso);
}

const FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

export function formatTime(value: string): string {
  const date = parseTimestamp(value);
  return Number.isNaN(date.getTime()) ? value : FORMAT.format(date);
}

const DAY = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const CLOCK = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

/** A timestamp; `stacked` puts the day above the time of day (a narrow table column). */
export function Time({
  value,
  fallback = '—',
  stacked = false,
}: {
  value: string | null | undefined;
  fallback?: string;
  stacked?: boolean;
}) {
  if (!value) return <span className="muted">{fallback}</span>;
  const date = parseTimestamp(value);
  if (Number.isNaN(date.getTime())) return <span>{value}</span>;
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()} className={stacked ? 'stacked' : undefined}>
      {stacked ? (
        <>
          <span>{DAY.format(date)}</span> <span>{CLOCK.format(date)}</span>
        </>
      ) : (
        FORMAT.format(date)
      )}
    </time>
  );
}

/** Days between a timestamp and now (whole days, rounded down). */
export function daysSince(value: string, now = Date.now()): number {
  return Math.floor((now - parseTimestamp(value).getTime()) / 86_400_000);
}

/** An ISO instant as a datetime-local input's value, in the reader's time zone. */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const date = parseTimestamp(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function fromLocalInput(value: string): string {
  if (!value) return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}
