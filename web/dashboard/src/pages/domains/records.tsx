// The DNS records a domain asks for, grouped by what they do, each value with its copy button (the DMARC record
// we suggest is in dmarc.tsx, beside its reports).
import { CopyButton } from '../../ui/copy.tsx';
import { StatusBadge } from '../../ui/feedback.tsx';
import { recordGroups, TXT_STRING_MAX, txtStrings, zoneOf, type Domain, type DomainRecord } from './model.ts';

export function RecordSections({ domain }: { domain: Domain }) {
  const zone = zoneOf(domain);
  return (
    <section aria-labelledby="records-title" className="section">
      <h2 id="records-title">DNS records</h2>
      <p className="muted">
        Publish these records at your DNS provider
        {zone ? (
          <>
            , in the zone <code>{zone}</code>: names are relative to it (most providers add the zone themselves)
          </>
        ) : null}
        .
      </p>
      {recordGroups(domain.records).map((group) =>
        group.records.length > 0 ? (
          <div key={group.id} className="record-group">
            <h3 id={`records-${group.id}`}>{group.title}</h3>
            <p className="hint">{group.about}</p>
            <RecordTable title={group.title} records={group.records} />
          </div>
        ) : null,
      )}
      {domain.tracking_subdomain ? null : (
        <p className="hint">No tracking subdomain: set one under Open and click tracking below to see its records.</p>
      )}
    </section>
  );
}

function RecordTable({ title, records }: { title: string; records: DomainRecord[] }) {
  return (
    <div className="table-wrap">
      <table className="records">
        <caption className="visually-hidden">{title} records</caption>
        <thead>
          <tr>
            <th scope="col">Record</th>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Priority</th>
            <th scope="col">TTL</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {records.map((record) => {
            const label = `${record.record} ${record.type}`;
            return (
              <tr key={`${record.record}-${record.type}-${record.name}`}>
                <th scope="row">{record.record}</th>
                <td data-label="Type">{record.type}</td>
                <td className="record-name" data-label="Name">
                  <div className="code-value">
                    <code>{record.name}</code>
                    <CopyButton value={record.name} label={`Copy the ${label} name`} />
                  </div>
                </td>
                <td className="record-value" data-label="Value">
                  <div className="code-value">
                    <code>{record.value}</code>
                    <CopyButton value={record.value} label={`Copy the ${label} value`} />
                  </div>
                  {record.type === 'TXT' && record.value.length > TXT_STRING_MAX ? (
                    <LongValueHint label={label} value={record.value} />
                  ) : null}
                </td>
                <td data-label="Priority">{record.priority ?? <span className="muted">—</span>}</td>
                <td data-label="TTL">{record.ttl}</td>
                <td data-label="Status">
                  <StatusBadge status={record.status} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A TXT value longer than one DNS string: how to publish it, and the value already split, to copy. */
function LongValueHint({ label, value }: { label: string; value: string }) {
  return (
    <p className="hint">
      This value is {value.length} characters long, and one TXT string holds at most {TXT_STRING_MAX}: publish it as
      several strings of the one record (most providers split it for you; for a zone file or a provider that does not,
      copy it split). <CopyButton value={txtStrings(value)} label={`Copy the ${label} value split into strings`} />
    </p>
  );
}
