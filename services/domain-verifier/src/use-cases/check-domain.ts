// One verification check of one domain: DNS lookups first (no transaction held across them), then the
// outcome applied under the domain's row lock with its events and the next timer, in one transaction.
import type { Kysely, Transaction } from 'kysely';
import type { DomainRecordStatus } from '@postline/contracts';
import { newId, type Logger } from '@postline/platform';
import {
  findDomain,
  insertCheck,
  lockDomain,
  pruneChecks,
  recordStates,
  saveRecordStates,
  updateDomain,
  type RecordStates,
} from '../db/domains.ts';
import type { DomainRow, DomainsDb } from '../db/schema.ts';
import type { DnsLookup } from '../dns/lookup.ts';
import {
  recordSpecsOf,
  type Capability,
  type Infrastructure,
  type RecordKind,
  type RecordPurpose,
  type RecordSpec,
} from '../domain/records.ts';
import {
  caaSearchEnds,
  caaSearchNames,
  checkCaa,
  checkCname,
  checkMx,
  checkTxt,
  domainStatus,
  nextCheckDelay,
  purposeVerified,
  recordStatus,
  VERIFICATION_WINDOW_S,
  type CaaStep,
  type Finding,
} from '../domain/verification.ts';
import type { DomainVerifierMetrics } from '../metrics.ts';
import { publishEvent, publishState, scheduleCheck } from './domain-messages.ts';

export type CheckDeps = {
  db: Kysely<DomainsDb>;
  dns: DnsLookup;
  infra: Infrastructure;
  /** POSTLINE_DELAY_SCALE. */
  scale: number;
  logger: Logger;
  metrics: Pick<DomainVerifierMetrics, 'checks' | 'lookupDuration'>;
  now?: () => Date;
};

/** What each record's lookup found, with the name it was looked up at. */
export type Findings = Partial<Record<RecordKind, Finding & { fqdn: string }>>;

/** History kept per domain. */
const CHECKS_KEPT = 50;

/** Looks every shown record up, in parallel. */
export async function lookUp(deps: CheckDeps, specs: RecordSpec[]): Promise<Findings> {
  const entries = await Promise.all(
    specs.map(async (spec) => {
      const started = performance.now();
      const finding = await lookUpOne(deps.dns, spec);
      deps.metrics.lookupDuration.observe(
        { type: spec.type, outcome: finding.outcome },
        (performance.now() - started) / 1000,
      );
      return [spec.kind, { ...finding, fqdn: spec.fqdn }] as const;
    }),
  );
  return Object.fromEntries(entries);
}

async function lookUpOne(dns: DnsLookup, spec: RecordSpec): Promise<Finding> {
  switch (spec.type) {
    case 'MX':
      return checkMx(spec, await dns.mx(spec.fqdn));
    case 'TXT':
      return checkTxt(spec, await dns.txt(spec.fqdn));
    case 'CNAME':
      return checkCname(spec, await dns.cname(spec.fqdn));
    case 'CAA': {
      // One name at a time, up from the tracking host, until the relevant set (or a DNS failure) is found.
      const steps: CaaStep[] = [];
      for (const name of caaSearchNames(spec.fqdn)) {
        const step = { name, lookup: await dns.caa(name) };
        steps.push(step);
        if (caaSearchEnds(step)) break;
      }
      return checkCaa(spec, steps);
    }
  }
}

/** Looks the domain's records up (outside any transaction); undefined when the domain is gone. */
export async function prepareCheck(deps: CheckDeps, teamId: string, domainId: string): Promise<Findings | undefined> {
  const domain = await findDomain(deps.db, teamId, domainId);
  if (!domain) return undefined;
  return lookUp(deps, recordSpecsOf(domain, deps.infra));
}

/**
 * A check asked for by POST /domains/{id}/verify: looks up, then applies the outcome in its own
 * transaction. Returns the updated row, or undefined when the domain is not the team's.
 */
export async function checkDomainNow(
  deps: CheckDeps,
  teamId: string,
  domainId: string,
): Promise<DomainRow | undefined> {
  const findings = await prepareCheck(deps, teamId, domainId);
  return (
    findings &&
    deps.db.transaction().execute((trx) => applyCheck(deps, trx, { teamId, domainId, trigger: 'manual', findings }))
  );
}

/**
 * Applies a check's findings to the domain: record statuses, domain status, verified capabilities, the
 * search window, history, events and the next timer. A scheduled check of a failed domain does nothing
 * (only POST /verify wakes it). Returns the updated row, or undefined when the domain is gone.
 */
export async function applyCheck(
  deps: CheckDeps,
  trx: Transaction<DomainsDb>,
  opts: { teamId: string; domainId: string; trigger: 'scheduled' | 'manual'; findings: Findings },
): Promise<DomainRow | undefined> {
  const now = deps.now?.() ?? new Date();
  const before = await lockDomain(trx, opts.teamId, opts.domainId);
  if (!before) return undefined;
  if (opts.trigger === 'scheduled' && before.status === 'failed') return before;
  const states = await recordStates(trx, before.id);
  const specs = recordSpecsOf(before, deps.infra);

  let windowStart = before.window_started_at;
  let checks = before.checks_in_window;
  if (opts.trigger === 'manual' && before.status === 'failed') {
    // Asking again after failing opens a new search window.
    windowStart = now;
    checks = 0;
  }
  const windowEnd = (start: Date) => start.getTime() + VERIFICATION_WINDOW_S * deps.scale * 1000;

  let next = evaluate(specs, states, opts.findings, now.getTime() >= windowEnd(windowStart));
  const lost = (purpose: RecordPurpose, was: boolean) =>
    was && !purposeVerified(next.records, purpose) && specs.some((spec) => spec.purpose === purpose);
  if (
    lost('sending', before.sending_verified) ||
    lost('receiving', before.receiving_verified) ||
    lost('tracking', before.tracking_verified)
  ) {
    // A verified domain whose record disappeared gets a fresh window to put it back before it fails.
    windowStart = now;
    checks = 0;
    next = evaluate(specs, states, opts.findings, false);
  }
  checks += 1;

  const enabled = (['sending', 'receiving'] as const).filter((capability: Capability) =>
    specs.some((spec) => spec.purpose === capability),
  );
  const status = domainStatus(next.records, enabled, next.windowOver);
  const trackingVerified = purposeVerified(next.records, 'tracking');
  const delay = nextCheckDelay({
    status,
    checks,
    windowRemainingS: (windowEnd(windowStart) - now.getTime()) / 1000,
    scale: deps.scale,
    trackingPending: specs.some((spec) => spec.purpose === 'tracking') && !trackingVerified,
  });
  const due = delay === undefined ? null : new Date(now.getTime() + delay * 1000);

  const after = await updateDomain(trx, before.id, {
    status,
    sending_verified: purposeVerified(next.records, 'sending'),
    receiving_verified: purposeVerified(next.records, 'receiving'),
    tracking_verified: trackingVerified,
    window_started_at: windowStart,
    checks_in_window: checks,
    last_checked_at: now,
    next_check_at: due,
  });
  await saveRecordStates(trx, before.id, next.states, now);
  await insertCheck(trx, { id: newId(), domain_id: before.id, trigger: opts.trigger, status, findings: opts.findings });
  await pruneChecks(trx, before.id, CHECKS_KEPT);

  const updatedStates: RecordStates = { ...states, ...next.states };
  const recordsChanged = specs.some((spec) => states[spec.kind].status !== updatedStates[spec.kind].status);
  if (status !== before.status || recordsChanged)
    await publishEvent(trx, 'domain.updated', after, updatedStates, deps.infra);
  if (
    status !== before.status ||
    after.sending_verified !== before.sending_verified ||
    after.receiving_verified !== before.receiving_verified ||
    after.tracking_verified !== before.tracking_verified
  ) {
    await publishState(trx, after);
  }
  if (due) await scheduleCheck(trx, after, due);
  deps.metrics.checks.inc({ trigger: opts.trigger, status });
  deps.logger.info(
    {
      domain_id: after.id,
      trigger: opts.trigger,
      status,
      previous: before.status,
      next_check_at: due?.toISOString() ?? null,
    },
    'domain checked',
  );
  return after;
}

type Evaluation = {
  states: Partial<RecordStates>;
  records: { purpose: RecordPurpose; status: DomainRecordStatus }[];
  windowOver: boolean;
};

/**
 * Record statuses from the findings. A record that was verified stays verified when its lookup only failed
 * temporarily: a DNS outage neither fails a domain nor stops its sending. A record with no finding (it
 * was not shown when the lookups ran, or under another name) keeps its status.
 */
function evaluate(specs: RecordSpec[], states: RecordStates, findings: Findings, windowOver: boolean): Evaluation {
  const next: Partial<RecordStates> = {};
  for (const spec of specs) {
    const finding = findings[spec.kind];
    // Looked up under another name (the tracking subdomain changed meanwhile): says nothing of this record.
    if (!finding || finding.fqdn !== spec.fqdn) continue;
    const previous = states[spec.kind].status;
    const status =
      finding.outcome === 'temporary' && previous === 'verified' ? 'verified' : recordStatus(finding, windowOver);
    next[spec.kind] = { status, detail: finding.outcome === 'verified' ? null : finding.detail };
  }
  return {
    states: next,
    records: specs.map((spec) => ({ purpose: spec.purpose, status: (next[spec.kind] ?? states[spec.kind]).status })),
    windowOver,
  };
}
