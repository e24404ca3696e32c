// Metrics: what the team's email did over a range (in the reader's time zone), from GET /emails/metrics.
// Volumes over time; opens and clicks by people apart from machines' and scanners'; the bounce and complaint
// rates drawn against the lines at which mailbox providers act (4% and 0.08%); and the same numbers by
// sending domain and by the recipients' mailbox provider (from their MX). Range, granularity and domain
// are kept in the URL. Every chart has its numbers in a table beside it.
import { useQuery } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { get } from '../api/client.ts';
import { ErrorMessage, Loading, Notice } from '../ui/feedback.tsx';
import { Field, LateSelect, text } from '../ui/form.tsx';
import { FilterForm, useFilters } from '../ui/list.tsx';
import { Stat } from '../ui/stat.tsx';

type Metrics = ApiShape<'EmailMetrics'>;
type Row = Metrics['data'][number];

/** The lines at which mailbox providers (and Resend) act on a sender. */
const BOUNCE_LINE = 0.04;
const COMPLAINT_LINE = 0.0008;

const RANGES = [
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
];
const GRANULARITIES = [
  { value: 'daily', label: 'Daily' },
  { value: 'weekly', label: 'Weekly' },
  { value: 'monthly', label: 'Monthly' },
  { value: 'hourly', label: 'Hourly (7 days at most)' },
];
const VOLUMES: { metric: string; label: string; color: string }[] = [
  { metric: 'sent', label: 'Sent', color: '#1f5bd8' },
  { metric: 'delivered', label: 'Delivered', color: '#116329' },
  { metric: 'bounced', label: 'Bounced', color: '#a8190f' },
  { metric: 'complained', label: 'Complained', color: '#7a4d00' },
  { metric: 'opened_by_people', label: 'Opened by people', color: '#6b3fa0' },
  { metric: 'clicked_by_people', label: 'Clicked by people', color: '#0b7285' },
];
const PROVIDERS: Record<string, string> = {
  gmail: 'Gmail',
  microsoft: 'Microsoft',
  yahoo: 'Yahoo',
  apple: 'Apple',
  other: 'Other',
};
const TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** A date `days` before today, in the reader's zone (YYYY-MM-DD). */
function daysAgo(days: number): string {
  const d = new Date(Date.now() - days * 86_400_000);
  return new Intl.DateTimeFormat('en-CA', { timeZone: TIME_ZONE }).format(d);
}

const count = (n: number | string | undefined) => Number(n ?? 0).toLocaleString();
const percent = (rate: number | string | undefined, digits = 2) => `${(Number(rate ?? 0) * 100).toFixed(digits)}%`;

export default function MetricsPage() {
  const [filters] = useFilters();
  const range = RANGES.some((r) => r.value === filters.range) ? filters.range! : '30';
  const asked = GRANULARITIES.some((g) => g.value === filters.granularity) ? filters.granularity! : 'daily';
  // Hourly covers a week at most: longer ranges fall back to daily.
  const granularity = asked === 'hourly' && Number(range) > 7 ? 'daily' : asked;
  const query = {
    start_date: daysAgo(Number(range) - 1),
    end_date: daysAgo(0),
    timezone: TIME_ZONE,
    granularity,
    ...(filters.domain_id ? { domain_id: filters.domain_id } : {}),
  };
  const read = (dimensions: string) => () => get<Metrics>('/emails/metrics', { ...query, dimensions });
  const key = JSON.stringify(query);
  const overTime = useQuery({ queryKey: ['metrics', 'period', key], queryFn: read('period') });
  const byDomain = useQuery({ queryKey: ['metrics', 'domain', key], queryFn: read('domain') });
  const byProvider = useQuery({ queryKey: ['metrics', 'provider', key], queryFn: read('provider') });
  const domains = useQuery({
    queryKey: ['domains', 'all'],
    queryFn: () => get<ApiShape<'DomainList'>>('/domains', { limit: 100 }),
  });
  const domainName = (id: string) => domains.data?.data.find((d) => d.id === id)?.name ?? id;

  return (
    <>
      <div className="page-header">
        <div>
          <h1>Metrics</h1>
          <p className="muted">
            What this team’s email did, counted as it happened. Days are counted in your time zone ({TIME_ZONE}).
          </p>
        </div>
      </div>
      <FilterForm
        label="Choose the metrics’ range"
        read={(data) => ({
          range: text(data, 'range'),
          granularity: text(data, 'granularity'),
          domain_id: text(data, 'domain_id'),
        })}
      >
        <Field label="Range">
          {(p) => (
            <select {...p} name="range" defaultValue={range}>
              {RANGES.map((r) => (
                <option key={r.value} value={r.value}>
                  {r.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Granularity">
          {(p) => (
            <select {...p} name="granularity" defaultValue={granularity}>
              {GRANULARITIES.map((g) => (
                <option key={g.value} value={g.value}>
                  {g.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Sending domain">
          {(p) => (
            <LateSelect
              {...p}
              name="domain_id"
              initial={filters.domain_id ?? ''}
              anyLabel="All domains"
              options={(domains.data?.data ?? []).map((d) => ({ value: d.id, label: d.name }))}
            />
          )}
        </Field>
      </FilterForm>
      <ErrorMessage error={overTime.error} />
      {overTime.data ? <Overview metrics={overTime.data} /> : overTime.isPending ? <Loading /> : null}
      {overTime.data ? <OverTime metrics={overTime.data} /> : null}
      <Breakdown
        title="By sending domain"
        query={byDomain}
        column="domain_id"
        heading="Domain"
        name={domainName}
        empty="Nothing was sent in this range."
      />
      <Breakdown
        title="By mailbox provider"
        note="From the MX host that answered each recipient: a company’s own domain hosted at Google counts as Gmail. Sends and opens are not split by provider."
        query={byProvider}
        column="provider"
        heading="Provider"
        name={(p) => PROVIDERS[p] ?? 'Not attributed'}
        empty="Nothing was delivered or refused in this range."
        byProvider
      />
    </>
  );
}

/** The range's totals, with the two rates that put a sender at risk drawn against their lines. */
function Overview({ metrics }: { metrics: Metrics }) {
  const t = metrics.totals;
  const bounceRisk = Number(t.bounce_rate) >= BOUNCE_LINE;
  const complaintRisk = Number(t.complaint_rate) >= COMPLAINT_LINE;
  return (
    <section aria-labelledby="totals-title" className="section">
      <h2 id="totals-title">Totals</h2>
      {bounceRisk || complaintRisk ? (
        <Notice tone="warning">
          {bounceRisk ? `The bounce rate is ${percent(t.bounce_rate)}, at or above 4%. ` : ''}
          {complaintRisk ? `The complaint rate is ${percent(t.complaint_rate, 3)}, at or above 0.08%. ` : ''}
          Mailbox providers start filtering or refusing a sender’s mail at these rates: clean the list and look at what
          the bounces say.
        </Notice>
      ) : null}
      <dl className="stats">
        <Stat label="Sent" value={count(t.sent)} />
        <Stat label="Delivered" value={count(t.delivered)} detail={`${percent(t.delivery_rate)} of sent`} />
        <Stat
          label="Bounced"
          value={count(t.bounced)}
          detail={`${percent(t.bounce_rate)} of sent (line: 4%) · ${count(t.bounced_permanent)} permanent, ${count(
            t.bounced_transient,
          )} transient, ${count(t.bounced_undetermined)} undetermined`}
          tone={bounceRisk ? 'bad' : undefined}
        />
        <Stat
          label="Complained"
          value={count(t.complained)}
          detail={`${percent(t.complaint_rate, 3)} of delivered (line: 0.08%)`}
          tone={complaintRisk ? 'bad' : undefined}
        />
        <Stat
          label="Opened by people"
          value={count(t.opened_by_people)}
          detail={`${percent(t.open_rate)} of delivered · ${count(t.opened_by_machines)} more by machines (privacy proxies, scanners)`}
        />
        <Stat
          label="Clicked by people"
          value={count(t.clicked_by_people)}
          detail={`${percent(t.click_rate)} of delivered · ${count(t.clicked_by_scanners)} more by link scanners`}
        />
        <Stat label="Unsubscribed" value={count(t.unsubscribed)} />
        <Stat label="Delayed" value={count(t.delivery_delayed)} detail="Deliveries deferred, to be tried again" />
      </dl>
    </section>
  );
}

/** Volumes and the two risk rates per period: charts, and the same numbers in a table. */
function OverTime({ metrics }: { metrics: Metrics }) {
  const rows = metrics.data;
  return (
    <section aria-labelledby="over-time-title" className="section">
      <h2 id="over-time-title">Over time</h2>
      <div className="charts">
        <figure className="card">
          <figcaption>Volumes</figcaption>
          <LineChart
            rows={rows}
            series={VOLUMES}
            label={`Volumes per ${metrics.granularity.replace(/ly$/, '').replace('dai', 'day')}`}
            format={(n) => count(n)}
          />
          <Legend series={VOLUMES} />
        </figure>
        <figure className="card">
          <figcaption>Bounce rate (line at 4%)</figcaption>
          <LineChart
            rows={rows}
            series={[{ metric: 'bounce_rate', label: 'Bounce rate', color: '#a8190f' }]}
            threshold={BOUNCE_LINE}
            label="Bounce rate per period, with the 4% line"
            format={(n) => percent(n, 1)}
          />
        </figure>
        <figure className="card">
          <figcaption>Complaint rate (line at 0.08%)</figcaption>
          <LineChart
            rows={rows}
            series={[{ metric: 'complaint_rate', label: 'Complaint rate', color: '#7a4d00' }]}
            threshold={COMPLAINT_LINE}
            label="Complaint rate per period, with the 0.08% line"
            format={(n) => percent(n, 2)}
          />
        </figure>
      </div>
      <details className="section">
        <summary>The numbers per period</summary>
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Metrics per period</caption>
            <thead>
              <tr>
                <th scope="col">Period</th>
                {VOLUMES.map((v) => (
                  <th key={v.metric} scope="col">
                    {v.label}
                  </th>
                ))}
                <th scope="col">Bounce rate</th>
                <th scope="col">Complaint rate</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={String(r.period)}>
                  <th scope="row" className="nowrap">
                    {String(r.period)}
                  </th>
                  {VOLUMES.map((v) => (
                    <td key={v.metric}>{count(r[v.metric])}</td>
                  ))}
                  <td>{percent(r.bounce_rate)}</td>
                  <td>{percent(r.complaint_rate, 3)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}

function Legend({ series }: { series: typeof VOLUMES }) {
  return (
    <ul className="legend" aria-hidden="true">
      {series.map((s) => (
        <li key={s.metric}>
          <span className="swatch" style={{ background: s.color }} />
          {s.label}
        </li>
      ))}
    </ul>
  );
}

/**
 * A line per series over the periods, in plain SVG (nothing loaded from elsewhere), with a dashed line at
 * `threshold` when given. Described to screen readers by its label; the numbers are in the table.
 */
function LineChart({
  rows,
  series,
  threshold,
  label,
  format,
}: {
  rows: Row[];
  series: { metric: string; label: string; color: string }[];
  threshold?: number;
  label: string;
  format: (n: number) => string;
}) {
  const width = 560;
  const height = 180;
  const pad = { left: 56, right: 8, top: 8, bottom: 24 };
  const values = rows.flatMap((r) => series.map((s) => Number(r[s.metric] ?? 0)));
  const top = Math.max(threshold ? threshold * 1.5 : 0, ...values, threshold ? 0 : 1);
  const x = (i: number) => pad.left + (rows.length <= 1 ? 0 : (i / (rows.length - 1)) * (width - pad.left - pad.right));
  const y = (v: number) => pad.top + (1 - v / top) * (height - pad.top - pad.bottom);
  const first = rows[0]?.period;
  const last = rows.at(-1)?.period;
  return (
    <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label} className="chart">
      <line x1={pad.left} x2={width - pad.right} y1={y(0)} y2={y(0)} stroke="#d9dde3" />
      <text x={pad.left - 6} y={y(top) + 4} textAnchor="end" className="axis">
        {format(top)}
      </text>
      <text x={pad.left - 6} y={y(0) + 4} textAnchor="end" className="axis">
        {format(0)}
      </text>
      {threshold !== undefined ? (
        <>
          <line
            x1={pad.left}
            x2={width - pad.right}
            y1={y(threshold)}
            y2={y(threshold)}
            stroke="#a8190f"
            strokeDasharray="6 4"
          />
          <text x={width - pad.right} y={y(threshold) - 4} textAnchor="end" className="axis">
            {format(threshold)}
          </text>
        </>
      ) : null}
      {series.map((s) => (
        <polyline
          key={s.metric}
          fill="none"
          stroke={s.color}
          strokeWidth="2"
          points={rows.map((r, i) => `${x(i)},${y(Number(r[s.metric] ?? 0))}`).join(' ')}
        />
      ))}
      {first !== undefined ? (
        <text x={pad.left} y={height - 6} className="axis">
          {String(first)}
        </text>
      ) : null}
      {last !== undefined && rows.length > 1 ? (
        <text x={width - pad.right} y={height - 6} textAnchor="end" className="axis">
          {String(last)}
        </text>
      ) : null}
    </svg>
  );
}

/** One row per value of a dimension (a domain, a provider) with its counts and rates. */
function Breakdown({
  title,
  note,
  query,
  column,
  heading,
  name,
  empty,
  byProvider,
}: {
  title: string;
  note?: string;
  query: { data?: Metrics | undefined; error: unknown; isPending: boolean };
  column: string;
  heading: string;
  name: (value: string) => string;
  empty: string;
  /** Rows by provider: sends are not split by provider, so the bounce rate is of what reached an MX. */
  byProvider?: boolean;
}) {
  const id = `${column}-breakdown`;
  const rows = (query.data?.data ?? []).filter((r) => !byProvider || r[column] !== '');
  const bounceRate = (r: Row) => {
    if (!byProvider) return Number(r.sent) > 0 ? percent(r.bounce_rate) : '—';
    const reached = Number(r.delivered) + Number(r.bounced);
    return reached > 0 ? percent(Number(r.bounced) / reached) : '—';
  };
  return (
    <section aria-labelledby={id} className="section">
      <h2 id={id}>{title}</h2>
      {note ? <p className="muted">{note}</p> : null}
      <ErrorMessage error={query.error} />
      {query.isPending ? (
        <Loading />
      ) : rows.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">{heading}</th>
                {byProvider ? null : <th scope="col">Sent</th>}
                <th scope="col">Delivered</th>
                <th scope="col">Bounced</th>
                <th scope="col">Delayed</th>
                <th scope="col">Complained</th>
                <th scope="col">{byProvider ? 'Bounced of reached' : 'Bounce rate'}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={String(r[column])}>
                  <th scope="row" className="break-anywhere">
                    {name(String(r[column]))}
                  </th>
                  {byProvider ? null : <td>{count(r.sent)}</td>}
                  <td>{count(r.delivered)}</td>
                  <td>{count(r.bounced)}</td>
                  <td>{count(r.delivery_delayed)}</td>
                  <td>{count(r.complained)}</td>
                  <td>{bounceRate(r)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
