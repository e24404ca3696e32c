// Where a domain's DMARC aggregate reports go, and which of a report's records belong to the domain. Pure.
//
// The address is `dmarc+<domain id, 32 hex digits>@<INBOUND_MX_HOST>`: the token in the local part ties a
// report to one domain of one team by the address the receiver sent it to, so a report is never filed by
// what its own `policy_published/domain` claims alone (anyone may send anything to an address published in
// DNS). The token is not a secret: the record that names it is public, and another team's domain id is a
// 404 on the API. The report's domain is checked against the token's domain as well (see recordsFor).
import type { DmarcAggregateReport, DmarcRecord } from './dmarc-report-xml.ts';

const LOCAL_PART = /^dmarc\+([0-9a-f]{32})$/i;

/** The `rua` address of a domain. */
export function reportAddressOf(domainId: string, mxHost: string): string {
  return `dmarc+${domainId.replaceAll('-', '').toLowerCase()}@${mxHost}`;
}

/** The DMARC record we suggest for a domain: monitoring only (`p=none`), its reports sent to us. */
export function suggestedDmarcRecord(
  domainName: string,
  domainId: string,
  mxHost: string,
): { name: string; type: 'TXT'; value: string } {
  return {
    name: `_dmarc.${domainName}`,
    type: 'TXT',
    value: `v=DMARC1; p=none; rua=mailto:${reportAddressOf(domainId, mxHost)};`,
  };
}

/** The domain id a report address's local part names (`dmarc+<hex>`), or undefined. */
export function domainIdOfLocalPart(local: string): string | undefined {
  const hex = LOCAL_PART.exec(local)?.[1]?.toLowerCase();
  if (!hex) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The records of `report` that are about `domain` (lower-case): all of them when the report's policy domain
 * is the domain or one of its subdomains; when the policy domain is a parent of the domain (a DMARC record
 * published at the organisational domain names our address), only the records whose From domain is the
 * domain or under it, since the rest are the parent's other mail; none when the report is about another
 * domain altogether.
 */
export function recordsFor(report: DmarcAggregateReport, domain: string): DmarcRecord[] {
  const policyDomain = report.policy.domain;
  if (isAtOrUnder(policyDomain, domain)) return report.records;
  if (isAtOrUnder(domain, policyDomain)) return report.records.filter((r) => isAtOrUnder(r.header_from, domain));
  return [];
}

function isAtOrUnder(name: string, parent: string): boolean {
  return name === parent || name.endsWith(`.${parent}`);
}
