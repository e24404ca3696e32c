// What the domain pages compute from GET /domains/{id}: whether checks are still running (the page polls
// until they settle), the DNS zone the records are named in, and the records a person publishes by hand.
import type { ApiShape } from '@postline/contracts';

export type Domain = ApiShape<'Domain'>;
export type DomainItem = ApiShape<'DomainList'>['data'][number];
export type DomainRecord = Domain['records'][number];
/** What PATCH and POST /domains/{id}/verify answer. */
export type DomainRef = { object: 'domain'; id: string };

/** The list's query key (the API keys page reads the same list); a domain's own is [DOMAIN, id]. */
export const DOMAINS = 'domains';
export const DOMAIN = 'domain';

/** How often a domain's page reads it again while a check is still to come. */
export const POLL_MS = 4000;

/** Statuses after which another check is still coming (the verifier's back-off schedule, or a DNS failure). */
const WAITING = new Set<string>(['not_started', 'pending', 'temporary_failure']);

/** True when neither the domain nor any of its records waits for a check: nothing will change by itself. */
export function isSettled(domain: Pick<Domain, 'status' | 'records'>): boolean {
  return !WAITING.has(domain.status) && domain.records.every((r) => !WAITING.has(r.status));
}

/**
 * The zone (registrable domain) the records are named in, read from the DKIM record's name
 * (`<selector>._domainkey[.<rest>]`, where `<rest>` is the domain relative to its zone); undefined when the
 * domain does not send, so has no DKIM record.
 */
export function zoneOf(domain: Pick<Domain, 'name' | 'records'>): string | undefined {
  const dkim = domain.records.find((r) => r.record === 'DKIM');
  if (!dkim) return undefined;
  const marker = dkim.name.indexOf('._domainkey');
  if (marker < 0) return undefined;
  const rest = dkim.name.slice(marker + '._domainkey'.length).replace(/^\./, '');
  if (rest === '') return domain.name;
  return domain.name.startsWith(`${rest}.`) ? domain.name.slice(rest.length + 1) : undefined;
}

/** A full host name as it is named in `zone` (the apex itself is the zone's name, as the API shows it). */
export function relativeTo(fqdn: string, zone: string): string {
  if (fqdn === zone) return fqdn;
  return fqdn.endsWith(`.${zone}`) ? fqdn.slice(0, -(zone.length + 1)) : fqdn;
}

/** The return-path host (bounces come back to it; the SPF records sit on it), when the domain sends. */
export function returnPathOf(domain: Pick<Domain, 'name' | 'records'>): string | undefined {
  const spf = domain.records.find((r) => r.record === 'SPF');
  const zone = zoneOf(domain);
  if (!spf || !zone) return undefined;
  return spf.name === zone || spf.name.endsWith(`.${zone}`) ? spf.name : `${spf.name}.${zone}`;
}

/** A DNS TXT string holds at most 255 bytes (RFC 1035 §3.3); a longer value is published as several. */
export const TXT_STRING_MAX = 255;

/** A long TXT value as quoted strings of at most 255 characters, the way most zone files take it. */
export function txtStrings(value: string): string {
  const parts: string[] = [];
  for (let i = 0; i < value.length; i += TXT_STRING_MAX) parts.push(`"${value.slice(i, i + TXT_STRING_MAX)}"`);
  return parts.join(' ');
}

export type RecordGroup = { id: string; title: string; about: string; records: DomainRecord[] };

/** The records in the groups the page shows them in: sending (DKIM and the return path), receiving, tracking. */
export function recordGroups(records: DomainRecord[]): RecordGroup[] {
  const of = (kinds: DomainRecord['record'][]) => records.filter((r) => kinds.includes(r.record));
  return [
    {
      id: 'sending',
      title: 'Sending: DKIM and return path',
      about:
        'DKIM signs every message with this domain’s key. The SPF records sit on the return path, where bounces come back.',
      records: of(['DKIM', 'SPF']),
    },
    {
      id: 'receiving',
      title: 'Receiving',
      about: 'The MX record sends mail for this domain to Postline.',
      records: of(['Receiving']),
    },
    {
      id: 'tracking',
      title: 'Tracking',
      about:
        'Opens and clicks are tracked on the tracking subdomain: the CNAME points it at Postline, and the CAA record lets Let’s Encrypt issue its certificate.',
      records: of(['Tracking', 'TrackingCAA']),
    },
  ];
}
