import type { DomainRecordStatus, DomainStatus } from '@postline/contracts';
import { TRACKING_CA, type Capability, type RecordPurpose, type RecordSpec } from './records.ts';

/** What one DNS question returned. `missing` is a definitive NXDOMAIN/NODATA; `temporary` is anything else. */
export type Lookup<T> = { ok: true; answers: T[] } | { ok: false; reason: 'missing' | 'temporary'; detail: string };
export type MxAnswer = { exchange: string; priority: number };
/** One TXT record: the character-strings as received (≤255 bytes each), not yet joined. */
export type TxtAnswer = string[];
/** One CNAME target as received. */
export type CnameAnswer = string;
/** One CAA record (RFC 8659 §4.1): `critical` is the issuer-critical flag; the tag as received. */
export type CaaAnswer = { critical: boolean; tag: string; value: string };
/** The CAA lookup of one name on the way up from the tracking host. */
export type CaaStep = { name: string; lookup: Lookup<CaaAnswer> };

export type Finding =
  | { outcome: 'verified' }
  | { outcome: 'missing' | 'mismatch' | 'invalid' | 'temporary'; detail: string };

/** The record we asked for, found exactly (character-strings of one record joined first). */
export function checkTxt(spec: RecordSpec, lookup: Lookup<TxtAnswer>): Finding {
  if (!lookup.ok) return { outcome: lookup.reason, detail: lookup.detail };
  const records = lookup.answers.map((chunks) => chunks.join(''));
  if (spec.kind === 'spf_txt') return checkSpf(spec.value, records);
  if (spec.kind === 'dkim') return checkDkim(spec.value, records);
  return records.includes(spec.value)
    ? { outcome: 'verified' }
    : { outcome: 'mismatch', detail: 'no TXT record with the expected value' };
}

/**
 * DKIM: a record with exactly our `p=` key. Other tags a DNS host may add (`v=DKIM1`, `k=rsa`) are
 * accepted as long as they say the same thing; a different or truncated key is a mismatch.
 */
function checkDkim(expected: string, records: string[]): Finding {
  if (records.length === 0) return { outcome: 'missing', detail: 'no TXT record' };
  const want = dkimTags(expected).get('p');
  for (const record of records) {
    if (record === expected) return { outcome: 'verified' };
    const tags = dkimTags(record);
    const version = tags.get('v');
    const keyType = tags.get('k');
    if (
      tags.get('p') === want &&
      (version === undefined || version === 'DKIM1') &&
      (keyType === undefined || keyType === 'rsa')
    ) {
      return { outcome: 'verified' };
    }
  }
  return { outcome: 'mismatch', detail: "the TXT record does not hold this domain's DKIM public key" };
}

function dkimTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    tags.set(part.slice(0, eq).trim(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

/**
 * SPF (RFC 7208): more than one `v=spf1` record at a name is a permerror, so it fails verification
 * whatever the records say. One record must include our SPF domain (our exact value, or the customer's own
 * record with our `include:` among its mechanisms).
 */
function checkSpf(expected: string, records: string[]): Finding {
  const spf = records.filter((r) => /^v=spf1(\s|$)/i.test(r.trim()));
  if (spf.length > 1) {
    return {
      outcome: 'invalid',
      detail: `${spf.length} SPF records found; a name must have exactly one (RFC 7208 §4.5)`,
    };
  }
  const [record] = spf;
  if (record === undefined) return { outcome: records.length > 0 ? 'mismatch' : 'missing', detail: 'no SPF record' };
  if (record === expected) return { outcome: 'verified' };
  const include = expected
    .split(/\s+/)
    .find((t) => t.startsWith('include:'))
    ?.toLowerCase();
  const terms = record
    .trim()
    .split(/\s+/)
    .map((t) => t.toLowerCase());
  if (include && (terms.includes(include) || terms.includes(`+${include}`))) return { outcome: 'verified' };
  return { outcome: 'mismatch', detail: `the SPF record does not contain ${include ?? 'our include'}` };
}

/** MX: our host among the exchanges (any preference), compared without case or trailing dot. */
export function checkMx(spec: RecordSpec, lookup: Lookup<MxAnswer>): Finding {
  if (!lookup.ok) return { outcome: lookup.reason, detail: lookup.detail };
  if (lookup.answers.length === 0) return { outcome: 'missing', detail: 'no MX record' };
  const host = (s: string) => s.toLowerCase().replace(/\.$/, '');
  return lookup.answers.some((a) => host(a.exchange) === host(spec.value))
    ? { outcome: 'verified' }
    : { outcome: 'mismatch', detail: `no MX record points at ${spec.value}` };
}

/** CNAME: our tracking host among the targets, compared without case or trailing dot. */
export function checkCname(spec: RecordSpec, lookup: Lookup<CnameAnswer>): Finding {
  if (!lookup.ok) return { outcome: lookup.reason, detail: lookup.detail };
  if (lookup.answers.length === 0) return { outcome: 'missing', detail: 'no CNAME record' };
  return lookup.answers.some((target) => hostKey(target) === hostKey(spec.value))
    ? { outcome: 'verified' }
    : { outcome: 'mismatch', detail: `the CNAME record does not point at ${spec.value}` };
}

function hostKey(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/**
 * The names whose CAA records are looked up for a host, in order (RFC 8659 §3): the host itself (a
 * resolver follows its CNAME to our tracking host), then each parent up to the top-level domain.
 */
export function caaSearchNames(host: string): string[] {
  const labels = hostKey(host).split('.');
  return labels.map((_, i) => labels.slice(i).join('.'));
}

/** Whether the search for the relevant CAA set stops at this step: a set was found, or the lookup failed temporarily. */
export function caaSearchEnds(step: CaaStep): boolean {
  return step.lookup.ok ? step.lookup.answers.length > 0 : step.lookup.reason === 'temporary';
}

/** Property tags our CA acts on (RFC 8659 §4, RFC 9495); any other tag marked critical forbids issuance. */
const KNOWN_CAA_TAGS = new Set([
  'issue',
  'issuewild',
  'iodef',
  'issuemail',
  'issuevmc',
  'contactemail',
  'contactphone',
]);

/**
 * TrackingCAA: may our CA (TRACKING_CA) issue a certificate for the tracking host? The relevant set is the
 * first non-empty CAA set on the way up from the host (`steps`, as looked up in `caaSearchNames` order).
 * No CAA record anywhere means any CA may issue (verified). In the relevant set, an unknown critical tag
 * forbids issuance; otherwise our CA must be named by an `issue` record, unless the set has no `issue`
 * record at all (`issuewild` does not apply to a host name). An `issue` record bound to an ACME account
 * (`accounturi`) or to validation methods other than ours (HTTP-01, TLS-ALPN-01) does not count.
 */
export function checkCaa(spec: RecordSpec, steps: CaaStep[]): Finding {
  for (const step of steps) {
    const { lookup } = step;
    if (!lookup.ok) {
      if (lookup.reason === 'temporary') return { outcome: 'temporary', detail: `${step.name}: ${lookup.detail}` };
      continue;
    }
    if (lookup.answers.length === 0) continue;
    return relevantCaaSet(spec, step.name, lookup.answers);
  }
  return { outcome: 'verified' };
}

function relevantCaaSet(spec: RecordSpec, name: string, records: CaaAnswer[]): Finding {
  const critical = records.find((r) => r.critical && !KNOWN_CAA_TAGS.has(r.tag.toLowerCase()));
  if (critical) {
    return {
      outcome: 'mismatch',
      detail: `the CAA records at ${name} hold a critical \`${critical.tag}\` property, which forbids issuance`,
    };
  }
  const issue = records.filter((r) => r.tag.toLowerCase() === 'issue');
  if (issue.length === 0 || issue.some((r) => issuePermits(r.value))) return { outcome: 'verified' };
  return {
    outcome: 'mismatch',
    detail: `the CAA records at ${name} do not allow ${TRACKING_CA} to issue: add ${spec.value}`,
  };
}

/** `issuer-domain-name [; key=value]*` (RFC 8659 §4.2). */
function issuePermits(value: string): boolean {
  const [issuer = '', ...parameters] = value.split(';');
  if (hostKey(issuer.trim()) !== TRACKING_CA) return false;
  for (const parameter of parameters) {
    const eq = parameter.indexOf('=');
    const key = parameter
      .slice(0, eq < 0 ? undefined : eq)
      .trim()
      .toLowerCase();
    const given =
      eq < 0
        ? ''
        : parameter
            .slice(eq + 1)
            .trim()
            .toLowerCase();
    if (key === 'accounturi') return false;
    if (
      key === 'validationmethods' &&
      !given.split(',').some((m) => m.trim() === 'http-01' || m.trim() === 'tls-alpn-01')
    )
      return false;
  }
  return true;
}

/** A record's status after a check: not found is pending while the window is open, failed after. */
export function recordStatus(finding: Finding, windowOver: boolean): DomainRecordStatus {
  switch (finding.outcome) {
    case 'verified':
      return 'verified';
    case 'temporary':
      return 'temporary_failure';
    case 'invalid':
      return 'failed';
    case 'missing':
    case 'mismatch':
      return windowOver ? 'failed' : 'pending';
  }
}

export type PurposeRecords = { purpose: RecordPurpose; status: DomainRecordStatus }[];

/**
 * A capability (or the tracking subdomain) counts as verified when it is enabled (set), has records and all
 * of them are verified.
 */
export function purposeVerified(records: PurposeRecords, purpose: RecordPurpose): boolean {
  const own = records.filter((r) => r.purpose === purpose);
  return own.length > 0 && own.every((r) => r.status === 'verified');
}

/**
 * The domain's status from the records of its enabled capabilities (tracking records never count: a
 * missing tracking CNAME neither stops sending nor makes a verified domain partially verified):
 * - verified: every enabled capability verified;
 * - partially_verified / partially_failed: one capability verified, the other still searched for / not found in time;
 * - temporary_failure: nothing verified and a lookup could not be answered (a DNS outage never fails a domain);
 * - failed: nothing verified when the window closed; pending otherwise.
 */
export function domainStatus(records: PurposeRecords, enabled: Capability[], windowOver: boolean): DomainStatus {
  const verified = enabled.filter((capability) => purposeVerified(records, capability));
  if (verified.length === enabled.length && enabled.length > 0) return 'verified';
  const unverified = records.filter((r) => r.status !== 'verified' && (enabled as RecordPurpose[]).includes(r.purpose));
  const temporary = unverified.some((r) => r.status === 'temporary_failure');
  const closed = windowOver && !temporary;
  if (verified.length > 0) return closed ? 'partially_failed' : 'partially_verified';
  if (closed) return 'failed';
  return temporary ? 'temporary_failure' : 'pending';
}

/** Unscaled seconds. */
export const FIRST_CHECK_DELAY_S = 60;
/** Waits between checks while records are being looked for: 1 min, 1, 2, 5, 10, 15, 30 min, then hourly. */
export const CHECK_BACKOFF_S = [60, 120, 300, 600, 900, 1800, 3600] as const;
/** Records not found within this window fail the domain (SES and Resend: 72 h). */
export const VERIFICATION_WINDOW_S = 72 * 3600;
/** Verified domains are looked up again this often, so a removed record is noticed. */
export const RECHECK_INTERVAL_S = 6 * 3600;

/**
 * Seconds until the next automatic check, or undefined for none (a failed domain waits for
 * POST /domains/{id}/verify). `checks` counts the checks of the current window; never later than the
 * window's end, so a domain fails on time. A (partially) verified domain whose tracking records are still
 * searched for inside the window keeps the back-off, so they are found as quickly as the others.
 */
export function nextCheckDelay(opts: {
  status: DomainStatus;
  checks: number;
  windowRemainingS: number;
  scale: number;
  /** The tracking subdomain is set and its records are not all verified. */
  trackingPending?: boolean;
}): number | undefined {
  const { status, checks, scale } = opts;
  if (status === 'failed') return undefined;
  const searchingTracking = opts.trackingPending === true && opts.windowRemainingS > 0;
  if ((status === 'verified' || status === 'partially_failed') && !searchingTracking) return RECHECK_INTERVAL_S * scale;
  const backoff = checks === 0 ? FIRST_CHECK_DELAY_S : (CHECK_BACKOFF_S[checks - 1] ?? CHECK_BACKOFF_S.at(-1) ?? 3600);
  const remaining = opts.windowRemainingS;
  // The window's last check lands just after it closes; after that (temporary failures) keep the back-off.
  return remaining > 0 ? Math.min(backoff * scale, remaining + 0.001) : backoff * scale;
}
