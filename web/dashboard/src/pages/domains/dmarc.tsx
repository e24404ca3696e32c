// A domain's DMARC: the record we suggest (monitoring only, its aggregate reports sent to the domain's report
// address at our MX), and what those reports say over a period (GET /domains/{id}/dmarc-reports): totals, the
// sources that fail DMARC (a service not yet set up, or someone else sending as the domain), every source
// IP, every reporting organisation, and the reports. The period is kept in the URL (`dmarc_days`).
import { useSearchParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { get } from '../../api/client.ts';
import { CopyButton } from '../../ui/copy.tsx';
import { Badge, EmptyState, ErrorMessage, Loading, Notice } from '../../ui/feedback.tsx';
import { Stat } from '../../ui/stat.tsx';
import { DOMAIN, relativeTo, zoneOf, type Domain } from './model.ts';

type DmarcReports = ApiShape<'DmarcReports'>;
type Source = DmarcReports['sources'][number];

const PERIODS = [7, 30, 90] as const;
const DAY_MS = 86_400_000;

const count = (n: number) => n.toLocaleString();
const share = (part: number, whole: number) => (whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`);

/** The last `days` UTC days, today included: reports are filed by the UTC day their period begins. */
function periodOf(days: number): { from: string; to: string } {
  const tomorrow = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  return {
    from: new Date(tomorrow - days * DAY_MS).toISOString().slice(0, 10),
    to: new Date(tomorrow).toISOString().slice(0, 10),
  };
}

/** The period asked for in the URL (`dmarc_days`), the reports over it, and how to choose another. */
function useDmarcReports(domain: Domain) {
  const [params, setParams] = useSearchParams();
  const asked = Number(params.get('dmarc_days'));
  const days = PERIODS.find((p) => p === asked) ?? 30;
  const period = periodOf(days);
  // One request for both sections: they share the query's key.
  const reports = useQuery({
    queryKey: [DOMAIN, domain.id, 'dmarc', period],
    queryFn: () => get<DmarcReports>(`/domains/${domain.id}/dmarc-reports`, period),
  });
  const choose = (value: string) => {
    const next = new URLSearchParams(params);
    next.set('dmarc_days', value);
    setParams(next, { replace: true });
  };
  return { days, reports, choose };
}

export function DmarcSuggestion({ domain }: { domain: Domain }) {
  return <Suggestion domain={domain} reports={useDmarcReports(domain).reports.data} />;
}

export function DmarcReportsSection({ domain }: { domain: Domain }) {
  const { days, reports, choose } = useDmarcReports(domain);
  return (
    <section aria-labelledby="dmarc-reports-title" className="section">
      <div className="section-header">
        <h2 id="dmarc-reports-title">DMARC reports</h2>
        <label className="inline-field">
          Period{' '}
          <select value={String(days)} onChange={(e) => choose(e.target.value)}>
            {PERIODS.map((p) => (
              <option key={p} value={p}>
                Last {p} days
              </option>
            ))}
          </select>
        </label>
      </div>
      <p className="muted">
        What receivers (Gmail, Microsoft, Yahoo and others) report of mail from <strong>{domain.name}</strong>, once a
        day, to the report address of the suggested DMARC record. Days are UTC.
      </p>
      <ErrorMessage error={reports.error} />
      {reports.isPending ? <Loading /> : reports.data ? <Figures data={reports.data} /> : null}
    </section>
  );
}

function Suggestion({ domain, reports }: { domain: Domain; reports: DmarcReports | undefined }) {
  const fqdn = `_dmarc.${domain.name}`;
  const zone = zoneOf(domain);
  const name = zone ? relativeTo(fqdn, zone) : fqdn;
  const record = reports?.suggested_record;
  return (
    <section aria-labelledby="dmarc-title" className="section">
      <h2 id="dmarc-title">Suggested: DMARC</h2>
      <p>
        DMARC tells receivers what to do with mail claiming to be from <strong>{domain.name}</strong> that neither DKIM
        nor SPF vouch for. Gmail and Yahoo require a DMARC record from bulk senders. <code>p=none</code> only asks
        receivers to report, so nothing is refused while you find every service that sends as you; the <code>rua=</code>{' '}
        address sends their reports here, shown under DMARC reports. Move to <code>p=quarantine</code> or{' '}
        <code>p=reject</code> once they show all your mail passes. Postline does not check this record.
      </p>
      <div className="table-wrap">
        <table className="records">
          <caption className="visually-hidden">Suggested DMARC record</caption>
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td data-label="Type">TXT</td>
              <td className="record-name" data-label="Name">
                <div className="code-value">
                  <code>{name}</code>
                  <CopyButton value={name} label="Copy the DMARC name" />
                </div>
              </td>
              <td className="record-value" data-label="Value">
                {record ? (
                  <div className="code-value">
                    <code>{record.value}</code>
                    <CopyButton value={record.value} label="Copy the DMARC value" />
                  </div>
                ) : (
                  <span className="muted">…</span>
                )}
              </td>
            </tr>
          </tbody>
        </table>
      </div>
      {reports ? (
        <p className="code-value">
          <span>Report address:</span> <code>{reports.report_address}</code>
          <CopyButton value={reports.report_address} label="Copy the report address" />
        </p>
      ) : null}
      <p className="hint">
        Already have a DMARC record? Add <code>mailto:{reports?.report_address ?? '…'}</code> to its <code>rua=</code>{' '}
        list (comma-separated) rather than publishing a second record: two DMARC records make both void.
      </p>
    </section>
  );
}

function Figures({ data }: { data: DmarcReports }) {
  const t = data.totals;
  if (t.reports === 0) {
    return (
      <EmptyState title="No reports in this period">
        <p>
          Receivers send a report a day for a domain whose DMARC record names the report address above, once they have
          seen mail from it. Publish the record, send some mail, and check back tomorrow.
        </p>
      </EmptyState>
    );
  }
  const failing = data.sources.filter((s) => s.failing);
  return (
    <>
      <dl className="stats">
        <Stat
          label="Messages reported"
          value={count(t.messages)}
          detail={`in ${count(t.reports)} report${t.reports === 1 ? '' : 's'}`}
        />
        <Stat
          label="DMARC pass"
          value={count(t.dmarc_pass)}
          detail={`${share(t.dmarc_pass, t.messages)} of messages`}
        />
        <Stat
          label="DMARC fail"
          value={count(t.dmarc_fail)}
          detail={`${share(t.dmarc_fail, t.messages)} of messages`}
          tone={t.dmarc_fail > 0 ? 'bad' : undefined}
        />
        <Stat label="SPF aligned" value={count(t.spf_aligned)} detail={share(t.spf_aligned, t.messages)} />
        <Stat label="DKIM aligned" value={count(t.dkim_aligned)} detail={share(t.dkim_aligned, t.messages)} />
      </dl>
      {failing.length > 0 ? (
        <div className="section">
          <Notice tone="warning">
            {failing.length} source{failing.length === 1 ? '' : 's'} sent mail as {data.domain} that failed DMARC: a
            service you use that is not set up to sign with your domain, or someone else sending as you. Tighten the
            policy only once every source you know passes.
          </Notice>
          <SourceTable title="Failing sources" id="dmarc-failing" sources={failing} />
        </div>
      ) : (
        <Notice tone="success">Every reported source passed DMARC in this period.</Notice>
      )}
      <SourceTable title="By source IP" id="dmarc-sources" sources={data.sources} />
      <Organizations data={data} />
      <Reports data={data} />
    </>
  );
}

function SourceTable({ title, id, sources }: { title: string; id: string; sources: Source[] }) {
  return (
    <div className="section">
      <h3 id={id}>{title}</h3>
      <div className="table-wrap">
        <table className="records" aria-labelledby={id}>
          <thead>
            <tr>
              <th scope="col">Source IP</th>
              <th scope="col">Messages</th>
              <th scope="col">DMARC pass</th>
              <th scope="col">DMARC fail</th>
              <th scope="col">SPF aligned</th>
              <th scope="col">DKIM aligned</th>
              <th scope="col">From domains</th>
              <th scope="col">Reported by</th>
            </tr>
          </thead>
          <tbody>
            {sources.map((s) => (
              <tr key={s.source_ip}>
                <td data-label="Source IP">
                  <code>{s.source_ip}</code> {s.failing ? <Badge tone="bad">failing</Badge> : null}
                </td>
                <td data-label="Messages">{count(s.messages)}</td>
                <td data-label="DMARC pass">{count(s.dmarc_pass)}</td>
                <td data-label="DMARC fail">{count(s.dmarc_fail)}</td>
                <td data-label="SPF aligned">{count(s.spf_aligned)}</td>
                <td data-label="DKIM aligned">{count(s.dkim_aligned)}</td>
                <td data-label="From domains">{s.header_from.join(', ')}</td>
                <td data-label="Reported by">{s.org_names.join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Organizations({ data }: { data: DmarcReports }) {
  return (
    <div className="section">
      <h3 id="dmarc-organizations">By reporting organisation</h3>
      <div className="table-wrap">
        <table className="records" aria-labelledby="dmarc-organizations">
          <thead>
            <tr>
              <th scope="col">Organisation</th>
              <th scope="col">Reports</th>
              <th scope="col">Messages</th>
              <th scope="col">DMARC pass</th>
              <th scope="col">DMARC fail</th>
            </tr>
          </thead>
          <tbody>
            {data.organizations.map((o) => (
              <tr key={o.org_name}>
                <td data-label="Organisation">{o.org_name}</td>
                <td data-label="Reports">{count(o.reports)}</td>
                <td data-label="Messages">{count(o.messages)}</td>
                <td data-label="DMARC pass">{count(o.dmarc_pass)}</td>
                <td data-label="DMARC fail">{count(o.dmarc_fail)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Reports({ data }: { data: DmarcReports }) {
  return (
    <div className="section">
      <h3 id="dmarc-report-list">Reports</h3>
      <div className="table-wrap">
        <table className="records" aria-labelledby="dmarc-report-list">
          <thead>
            <tr>
              <th scope="col">Reported by</th>
              <th scope="col">Period (UTC)</th>
              <th scope="col">Policy seen</th>
              <th scope="col">Messages</th>
              <th scope="col">DMARC fail</th>
              <th scope="col">Report id</th>
            </tr>
          </thead>
          <tbody>
            {data.reports.map((r) => (
              <tr key={r.id}>
                <td data-label="Reported by">
                  {r.org_name} <span className="muted small-text">{r.org_email}</span>
                </td>
                <td data-label="Period (UTC)">
                  {r.begin.slice(0, 16).replace('T', ' ')} – {r.end.slice(0, 16).replace('T', ' ')}
                </td>
                <td data-label="Policy seen">
                  <code>p={r.policy.p}</code>
                </td>
                <td data-label="Messages">{count(r.messages)}</td>
                <td data-label="DMARC fail">{count(r.dmarc_fail)}</td>
                <td data-label="Report id">
                  <code className="small-text">{r.report_id}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
