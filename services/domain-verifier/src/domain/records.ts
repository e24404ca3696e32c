import type { DomainCapabilities, DomainEventRecord, DomainRecordStatus } from '@postline/contracts';
import { relativeTo } from './names.ts';

/** The four records we ask a customer to publish; each has its own status. */
export const RECORD_KINDS = ['dkim', 'spf_mx', 'spf_txt', 'receiving_mx'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

export type Capability = 'sending' | 'receiving';

/** Where our side lives: what the customer's records must point at. */
export type Infrastructure = {
  /** Our inbound MX host: target of the return-path MX (bounces) and of the receiving MX. */
  inboundMxHost: string;
  /** The SPF domain listing our sending hosts. */
  spfInclude: string;
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
};

export type RecordSpec = {
  kind: RecordKind;
  capability: Capability;
  /** The API's name for it (webhook payloads say `Receiving MX` for `Receiving`). */
  record: 'DKIM' | 'SPF' | 'Receiving';
  type: 'TXT' | 'MX';
  /** As the customer enters it in their zone (relative); `fqdn` is what we look up. */
  name: string;
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

/** The records of the enabled capabilities, in the order the API lists them. */
export function recordsFor(domain: DomainRecordInput, infra: Infrastructure): RecordSpec[] {
  const returnPath = `${domain.returnPath}.${domain.name}`;
  const dkim = `${domain.dkimSelector}._domainkey.${domain.name}`;
  const records: RecordSpec[] = [];
  if (domain.sending) {
    records.push(
      {
        kind: 'dkim',
        capability: 'sending',
        record: 'DKIM',
        type: 'TXT',
        name: relativeTo(dkim, domain.zone),
        fqdn: dkim,
        value: dkimRecordValue(domain.dkimPublicKey),
      },
      {
        kind: 'spf_mx',
        capability: 'sending',
        record: 'SPF',
        type: 'MX',
        name: relativeTo(returnPath, domain.zone),
        fqdn: returnPath,
        value: infra.inboundMxHost,
        priority: MX_PRIORITY,
      },
      {
        kind: 'spf_txt',
        capability: 'sending',
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
      capability: 'receiving',
      record: 'Receiving',
      type: 'MX',
      name: domain.name,
      fqdn: domain.name,
      value: infra.inboundMxHost,
      priority: MX_PRIORITY,
    });
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
};

/** The records a stored domain shows now (enabled capabilities only). */
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
  return { ...apiRecord(spec, status), record: spec.record === 'Receiving' ? 'Receiving MX' : spec.record } as DomainEventRecord;
}
