// GET /emails/metrics from stored counts: the range in the time zone, the periods it covers, the metrics
// made of others (bounced is its three kinds, opened and clicked are people's and machines'), and rates.
import { EMAIL_METRICS, type EmailMetric } from '@postline/contracts';

export type Granularity = 'hourly' | 'daily' | 'weekly' | 'monthly';
export const UNIT_OF = { hourly: 'hour', daily: 'day', weekly: 'week', monthly: 'month' } as const;

/** Stored counter names (the outbox trigger's email_event_metric, and `unsubscribed`). */
type Stored = Record<string, number>;

const SUMS: Partial<Record<EmailMetric, string[]>> = {
  bounced: ['bounced_permanent', 'bounced_transient', 'bounced_undetermined'],
  opened: ['opened_by_people', 'opened_by_machines'],
  clicked: ['clicked_by_people', 'clicked_by_scanners'],
};

/** numerator / denominator, both metrics. */
const RATES: Partial<Record<EmailMetric, [EmailMetric, EmailMetric]>> = {
  delivery_rate: ['delivered', 'sent'],
  bounce_rate: ['bounced', 'sent'],
  complaint_rate: ['complained', 'delivered'],
  open_rate: ['opened_by_people', 'delivered'],
  click_rate: ['clicked_by_people', 'delivered'],
  unsubscribe_rate: ['unsubscribed', 'delivered'],
};

/** One metric from stored counts: a count, a sum of counts, or a rate (0 when nothing to divide by). */
export function metricValue(stored: Stored, metric: EmailMetric): number {
  const rate = RATES[metric];
  if (rate) {
    const denominator = metricValue(stored, rate[1]);
    return denominator === 0 ? 0 : Math.round((metricValue(stored, rate[0]) / denominator) * 10_000) / 10_000;
  }
  const parts = SUMS[metric] ?? [metric];
  return parts.reduce((sum, part) => sum + (stored[part] ?? 0), 0);
}

export const ALL_METRICS: readonly EmailMetric[] = EMAIL_METRICS;

/** A calendar date `days` after `date` (YYYY-MM-DD, no time zone involved). */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Today's date in `timezone`. */
export function todayIn(timezone: string, now: Date): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now);
}

/**
 * The periods of [start, end] (dates, inclusive) at `granularity`, as sumCounts names them: days and hours
 * as they are, a week by its Monday, a month by its first day.
 */
export function periodsOf(start: string, end: string, granularity: Granularity): string[] {
  const periods: string[] = [];
  const first = (date: string) => {
    if (granularity === 'weekly') {
      const weekday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7; // Monday 0
      return addDays(date, -weekday);
    }
    if (granularity === 'monthly') return `${date.slice(0, 7)}-01`;
    return date;
  };
  for (let day = start; day <= end; day = addDays(day, 1)) {
    if (granularity === 'hourly') {
      for (let h = 0; h < 24; h++) periods.push(`${day}T${String(h).padStart(2, '0')}:00`);
      continue;
    }
    const period = first(day);
    if (periods.at(-1) !== period) periods.push(period);
  }
  return periods;
}
