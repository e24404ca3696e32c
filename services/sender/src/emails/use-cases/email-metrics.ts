// GET /emails/metrics: totals and rows from the counts kept as events happen, never by reading emails.
import type { Kysely } from 'kysely';
import type { ApiRequests, EmailMetric } from '@postline/contracts';
import { validationError } from '@postline/platform';
import { sumCounts, type CountRow } from '../db/email-metrics.ts';
import {
  addDays,
  ALL_METRICS,
  metricValue,
  periodsOf,
  todayIn,
  UNIT_OF,
  type Granularity,
} from '../domain/email-metrics.ts';
import type { SenderDb } from '../../db/schema.ts';

/** At most this many days in one request (hourly: 31). */
const MAX_DAYS = 366;
const MAX_HOURLY_DAYS = 31;

const DIMENSION_COLUMN = {
  period: 'period',
  domain: 'domain_id',
  broadcast: 'broadcast_id',
  provider: 'provider',
  email: 'email_id',
} as const;

export async function emailMetrics(
  deps: { db: Kysely<SenderDb>; now: () => Date },
  teamId: string,
  query: ApiRequests.EmailMetricsQuery,
) {
  const timezone = query.timezone ?? 'UTC';
  const granularity: Granularity = query.granularity ?? 'daily';
  const now = deps.now();
  // A date is the whole day in the time zone; a date and time, that instant.
  const endAt = query.end_date ?? now.toISOString();
  const end = isDate(endAt) ? endAt : todayIn(timezone, new Date(endAt));
  const startAt = query.start_date ?? addDays(end, -6);
  const start = isDate(startAt) ? startAt : todayIn(timezone, new Date(startAt));
  const from = isDate(startAt) ? utcOf(startAt, timezone) : new Date(startAt);
  const to = isDate(endAt) ? utcOf(addDays(endAt, 1), timezone) : new Date(endAt);
  if (from > to) throw validationError('start_date must not be after end_date');
  const days = (Date.parse(end) - Date.parse(start)) / 86_400_000 + 1;
  const most = granularity === 'hourly' ? MAX_HOURLY_DAYS : MAX_DAYS;
  if (days > most) throw validationError(`A ${granularity} request covers at most ${most} days.`);
  const metrics: EmailMetric[] = query.metrics ?? [...ALL_METRICS];
  const dimensions = query.dimensions ?? [];
  const has = (d: (typeof dimensions)[number]) => dimensions.includes(d);

  const rows = await sumCounts(deps.db, {
    teamId,
    from,
    to,
    timezone,
    unit: has('period') ? UNIT_OF[granularity] : undefined,
    byDomain: has('domain'),
    byBroadcast: has('broadcast'),
    byProvider: has('provider'),
    // Narrowed to some emails, counted from their events: the counters have no email.
    byEmail: has('email') || query.email_id !== undefined,
    domainIds: query.domain_id,
    broadcastIds: query.broadcast_id,
    emailIds: query.email_id,
  }).catch((err: unknown) => {
    // A zone name the runtime knows and the database does not (their zone data differ).
    if ((err as { code?: string }).code === '22023')
      throw validationError(`Invalid \`timezone\`: ${timezone} is not known here.`);
    throw err;
  });

  // Stored counts by row (its dimensions' values), then the asked metrics of each.
  const columns = dimensions.map((d) => DIMENSION_COLUMN[d]);
  const keyOf = (row: Partial<Pick<CountRow, (typeof columns)[number]>>) =>
    JSON.stringify(columns.map((c) => row[c] ?? null));
  const grouped = new Map<string, { dims: Record<string, string | null>; stored: Record<string, number> }>();
  const total: Record<string, number> = {};
  for (const row of rows) {
    total[row.metric] = (total[row.metric] ?? 0) + row.n;
    if (columns.length === 0) continue;
    const key = keyOf(row);
    let entry = grouped.get(key);
    if (!entry) {
      entry = { dims: Object.fromEntries(columns.map((c) => [c, row[c]])), stored: {} };
      grouped.set(key, entry);
    }
    entry.stored[row.metric] = (entry.stored[row.metric] ?? 0) + row.n;
  }
  // Split by period alone, every period of the range has its row, counted or not (a chart's x axis).
  if (dimensions.length === 1 && has('period')) {
    for (const period of periodsOf(start, end, granularity)) {
      const key = keyOf({ period });
      if (!grouped.has(key)) grouped.set(key, { dims: { period }, stored: {} });
    }
  }
  const names = await namesOf(
    deps.db,
    teamId,
    [...grouped.values()].map((g) => g.dims),
  );
  const data = [...grouped.values()]
    .map(({ dims, stored }) => ({
      ...Object.fromEntries(Object.entries(dims).map(([k, v]) => [k, v ?? ''])),
      ...(dims.domain_id ? { domain_name: names.domains.get(dims.domain_id) ?? '' } : {}),
      ...(dims.broadcast_id ? { broadcast_name: names.broadcasts.get(dims.broadcast_id) ?? '' } : {}),
      ...Object.fromEntries(metrics.map((m) => [m, metricValue(stored, m)])),
    }))
    .sort((a, b) => compareRows(a, b, columns));
  return {
    object: 'metrics' as const,
    start_date: startAt,
    end_date: query.end_date ?? end,
    metrics,
    dimensions,
    granularity,
    totals: Object.fromEntries(metrics.map((m) => [m, metricValue(total, m)])),
    data,
  };
}

const isDate = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);

/** The names of the domains and broadcasts the rows name (the team's only). */
async function namesOf(db: Kysely<SenderDb>, teamId: string, rows: Record<string, string | null>[]) {
  const domainIds = [...new Set(rows.map((r) => r.domain_id).filter((id): id is string => Boolean(id)))];
  const broadcastIds = [...new Set(rows.map((r) => r.broadcast_id).filter((id): id is string => Boolean(id)))];
  const [domains, broadcasts] = await Promise.all([
    domainIds.length
      ? db
          .selectFrom('sending_domains')
          .select(['domain_id as id', 'name'])
          .where('team_id', '=', teamId)
          .where('domain_id', 'in', domainIds)
          .execute()
      : [],
    broadcastIds.length
      ? db
          .selectFrom('broadcasts')
          .select(['id', 'name'])
          .where('team_id', '=', teamId)
          .where('id', 'in', broadcastIds)
          .execute()
      : [],
  ]);
  return {
    domains: new Map(domains.map((d) => [d.id, d.name])),
    broadcasts: new Map(broadcasts.map((b) => [b.id, b.name ?? ''])),
  };
}

/** The UTC instant at which `date` begins in `timezone`. */
function utcOf(date: string, timezone: string): Date {
  // The zone's offset at that moment, found from how the zone reads the same instant taken as UTC.
  const guess = new Date(`${date}T00:00:00Z`);
  const offsetAt = (instant: Date) => {
    const parts = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    }).formatToParts(instant);
    const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
    const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
    return asUtc - instant.getTime();
  };
  const first = new Date(guess.getTime() - offsetAt(guess));
  // Once more at the found instant, in case a DST change lies between the guess and it.
  return new Date(guess.getTime() - offsetAt(first));
}

function compareRows(
  a: Record<string, string | number>,
  b: Record<string, string | number>,
  columns: readonly string[],
): number {
  for (const c of columns) {
    const x = String(a[c] ?? '');
    const y = String(b[c] ?? '');
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
