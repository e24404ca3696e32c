import type { DomainCapabilities, DomainEventRecord, DomainRecordStatus } from '@postline/contracts';
import { relativeTo } from './names.ts';

/** The records we ask a customer to publish; each has its own status. */
export const RECORD_KINDS = ['dkim', 'spf_mx', 'spf_txt', 'receiving_mx', 'tracking_cname', 'tracking_caa'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

export type Capability = 'sending' | 'receiving';
/**
 * What a record is for: one of the domain's capabilities, or its tracking subdomain. Tracking is not a
 * capability: its records never enter the domain's status (which covers sending and receiving only), they
 * decide whether open and click tracking may be applied (`tracking_verified`).
 */
export type RecordPurpose = Capability | 'tracking';

/**
 * The certificate authority whose `issue` a CAA record set must allow so that we can obtain the tracking
 * host's TLS certificate (ACME, HTTP-01 over the CNAME that points the host at us).
 */
export const TRACKING_CA = 'letsencrypt.org';

/** Where our side lives: what the customer's records must point at. */
export type Infrastructure = {
  /** Our inbound MX host: target of the return-path MX (bounces) and of the receiving MX. */
  inboundMxHost: string;
  /** The SPF domain listing our sending hosts. */
  spfInclude: string;
  /** TRACKING_HOST: the CNAME target of each domain's tracking subdomain (serves opens and clicks). */
  trackingHost: string;
};

export type DomainRecordInput = {
  name: string;
  /** Registrable domain the customer edits (records are named relative to it). */
  zone: string;
  dkimSelector: string;
  /** Base64 SubjectPublicKeyInfo (DER) of the domain's DKIM key. */
  dkimPublicKey: string;
  /** `send` by default: the return-path subdomain label(s). */
  returnPath: string;
  sending: boolean;
  receiving: boolean;
  /** The tracking subdomain's label(s) (`links`), or null for none. */
  trackingSubdomain: string | null;
};

export type RecordSpec = {
  kind: RecordKind;
  purpose: RecordPurpose;
  /** The API's name for it (webhook payloads say `Receiving MX` for `Receiving`). */
  record: 'DKIM' | 'SPF' | 'Receiving' | 'Tracking' | 'TrackingCAA';
  type: 'TXT' | 'MX' | 'CNAME' | 'CAA';
  /** As the customer enters it in their zone (relative); `fqdn` is what we look up. */
  name: string;
  /** What we look up: the record's own name; for the CAA record, the tracking host whose CAA set is checked. */
  fqdn: string;
  value: string;
  priority?: number;
};

export const MX_PRIORITY = 10;

export function dkimRecordValue(publicKey: string): string {
  return `p=${publicKey}`;
}

export function spfRecordValue(infra: Infrastructure): string {
  return `v=spf1 include:${infra.spfInclude} ~all`;
}

/** The CAA record that allows our certificate authority to issue (flags 0: not critical). */
export function trackingCaaValue(): string {
  return `0 issue "${TRACKING_CA}"`;
}

/** The records of the enabled capabilities, in the order the API lists them. */
export function recordsFor(domain: DomainRecordInput, infra: Infrastructure): RecordSpec[] {
  const returnPath = `${domain.returnPath}.${domain.name}`;
  const dkim = `${domain.dkimSelector}._domainkey.${domain.name}`;
  const records: RecordSpec[] = [];
  if (domain.sending) {
    records.push(
      {
        kind: 'dkim',
        purpose: 'sending',
        record: 'DKIM',
        type: 'TXT',
        name: relativeTo(dkim, domain.zone),
        fqdn: dkim,
        value: dkimRecordValue(domain.dkimPublicKey),
      },
      {
        kind: 'spf_mx',
        purpose: 'sending',
        record: 'SPF',
        type: 'MX',
        name: relativeTo(returnPath, domain.zone),
        fqdn: returnPath,
        value: infra.inboundMxHost,
        priority: MX_PRIORITY,
      },
      {
        kind: 'spf_txt',
        purpose: 'sending',
        record: 'SPF',
        type: 'TXT',
        name: relativeTo(returnPath, domain.zone),
        fqdn: returnPath,
        value: spfRecordValue(infra),
      },
    );
  }
  if (domain.receiving) {
    records.push({
      kind: 'receiving_mx',
      purpose: 'receiving',
      record: 'Receiving',
      type: 'MX',
      name: domain.name,
      fqdn: domain.name,
      value: infra.inboundMxHost,
      priority: MX_PRIORITY,
    });
  }
  if (domain.trackingSubdomain) {
    const trackingHost = `${domain.trackingSubdomain}.${domain.name}`;
    records.push(
      {
        kind: 'tracking_cname',
        purpose: 'tracking',
        record: 'Tracking',
        type: 'CNAME',
        name: relativeTo(trackingHost, domain.zone),
        fqdn: trackingHost,
        value: infra.trackingHost,
      },
      {
        // A CNAME owns its name (RFC 1034 §3.6.2): no CAA can sit beside it. Asked for at the zone apex, where
        // a customer's CAA records usually are; adding it to that set lets our CA issue without taking any
        // other CA's permission away. Checked on the tracking host's relevant CAA set (RFC 8659 §3), so it is
        // verified too when no CAA record restricts issuance at all.
        kind: 'tracking_caa',
        purpose: 'tracking',
        record: 'TrackingCAA',
        type: 'CAA',
        name: domain.zone,
        fqdn: trackingHost,
        value: trackingCaaValue(),
      },
    );
  }
  return records;
}

/** The columns of a stored domain that decide its records and capabilities. */
export type StoredDomainRecords = {
  name: string;
  zone: string;
  dkim_selector: string;
  dkim_public_key: string;
  custom_return_path: string;
  sending: boolean;
  receiving: boolean;
  tracking_subdomain: string | null;
};

/** The records a stored domain shows now (enabled capabilities, and the tracking subdomain's when set). */
export function recordSpecsOf(domain: StoredDomainRecords, infra: Infrastructure): RecordSpec[] {
  return recordsFor(
    {
      name: domain.name,
      zone: domain.zone,
      dkimSelector: domain.dkim_selector,
      dkimPublicKey: domain.dkim_public_key,
      returnPath: domain.custom_return_path,
      sending: domain.sending,
      receiving: domain.receiving,
      trackingSubdomain: domain.tracking_subdomain,
    },
    infra,
  );
}

/** A domain's capabilities as the API and events show them. */
export function capabilitiesOf(domain: { sending: boolean; receiving: boolean }): DomainCapabilities {
  return {
    sending: domain.sending ? 'enabled' : 'disabled',
    receiving: domain.receiving ? 'enabled' : 'disabled',
  };
}

export type ShownRecord = {
  record: string;
  name: string;
  type: string;
  ttl: string;
  status: DomainRecordStatus;
  value: string;
  priority?: number;
};

/** A record as the REST API shows it. */
export function apiRecord(spec: RecordSpec, status: DomainRecordStatus): ShownRecord {
  return {
    record: spec.record,
    name: spec.name,
    type: spec.type,
    ttl: 'Auto',
    status,
    value: spec.value,
    ...(spec.priority === undefined ? {} : { priority: spec.priority }),
  };
}

/** A record as webhook payloads show it. */
export function eventRecord(spec: RecordSpec, status: DomainRecordStatus): DomainEventRecord {
  return {
    ...apiRecord(spec, status),
    record: spec.record === 'Receiving' ? 'Receiving MX' : spec.record,
  } as DomainEventRecord;
}
