// Domain use cases behind /domains: each change commits with its events and timer (outbox).
import type { Kysely, Transaction } from 'kysely';
import { ApiError, newId, pgCode, PG_UNIQUE_VIOLATION, type SecretBox } from '@postline/platform';
import { generateDkimKey, type DkimKey } from '../crypto/dkim-key.ts';
import {
  deleteDomain,
  domainNameTaken,
  insertDomain,
  lockDomain,
  recordStates,
  saveRecordStates,
  updateDomain,
  type RecordStates,
} from '../db/domains.ts';
import type { DomainRow, DomainsDb } from '../db/schema.ts';
import { recordSpecsOf, type Infrastructure } from '../domain/records.ts';
import { domainStatus, FIRST_CHECK_DELAY_S } from '../domain/verification.ts';
import { cancelCheck, publishEvent, publishState, scheduleCheck } from './domain-messages.ts';

export type ManageDomainsDeps = {
  db: Kysely<DomainsDb>;
  box: SecretBox;
  infra: Infrastructure;
  /** POSTLINE_DELAY_SCALE. */
  scale: number;
  now?: () => Date;
};

export type NewDomain = {
  name: string;
  zone: string;
  region: string;
  customReturnPath: string;
  openTracking: boolean;
  clickTracking: boolean;
  trackingSubdomain: string | null;
  tls: 'opportunistic' | 'enforced';
  sending: boolean;
  receiving: boolean;
};

export type DomainView = { domain: DomainRow; states: RecordStates };

export function alreadyRegistered(name: string): ApiError {
  return new ApiError(403, 'validation_error', `The \`${name}\` domain has been registered already.`);
}

/** Creates the domain with its own DKIM key; the first check is due ~60 s (scaled) later. */
export async function createDomain(deps: ManageDomainsDeps, teamId: string, input: NewDomain): Promise<DomainView> {
  if (await domainNameTaken(deps.db, input.name)) throw alreadyRegistered(input.name);
  const key = await generateDkimKey();
  const now = deps.now?.() ?? new Date();
  try {
    return await deps.db
      .transaction()
      .execute(async (trx) => insertNewDomain(trx, deps, { id: newId(), teamId, input, key, now }));
  } catch (err) {
    // Two creates of one name at once: the unique index decides, the loser gets the same answer.
    if (pgCode(err) === PG_UNIQUE_VIOLATION) throw alreadyRegistered(input.name);
    throw err;
  }
}

/**
 * Writes a new domain (records not started) with its domain.created, its state for the read models and its
 * first check ~60 s (scaled) later, in the caller's transaction: a creation, or a claim that completes.
 */
export async function insertNewDomain(
  trx: Transaction<DomainsDb>,
  deps: ManageDomainsDeps,
  domain: { id: string; teamId: string; input: NewDomain; key: DkimKey; now: Date },
): Promise<DomainView> {
  const { input, key, now } = domain;
  const firstCheck = new Date(now.getTime() + FIRST_CHECK_DELAY_S * deps.scale * 1000);
  const row = await insertDomain(trx, {
    id: domain.id,
    team_id: domain.teamId,
    name: input.name,
    zone: input.zone,
    region: input.region,
    status: 'not_started',
    custom_return_path: input.customReturnPath,
    open_tracking: input.openTracking,
    click_tracking: input.clickTracking,
    tracking_subdomain: input.trackingSubdomain,
    tls: input.tls,
    sending: input.sending,
    receiving: input.receiving,
    dkim_selector: key.selector,
    dkim_public_key: key.publicKey,
    dkim_private_key_encrypted: deps.box.seal(key.privateKeyPem),
    window_started_at: now,
    next_check_at: firstCheck,
    created_at: now,
  });
  const states = await recordStates(trx, row.id);
  await publishEvent(trx, 'domain.created', row, states, deps.infra);
  await publishState(trx, row);
  await scheduleCheck(trx, row, firstCheck);
  return { domain: row, states };
}

export type DomainPatch = {
  openTracking?: boolean;
  clickTracking?: boolean;
  trackingSubdomain?: string | null;
  tls?: 'opportunistic' | 'enforced';
  sending?: boolean;
  receiving?: boolean;
};

/**
 * Applies a PATCH. Enabling a capability adds its records (not started) and opens a new search window
 * with a check ~60 s (scaled) later; the status is derived again from the records now shown. Setting or
 * changing the tracking subdomain does the same for its two records (which never enter the status); clearing
 * it (`trackingSubdomain: null`) removes them, and tracking is no longer verified.
 */
export async function patchDomain(
  deps: ManageDomainsDeps,
  teamId: string,
  id: string,
  patch: DomainPatch,
): Promise<DomainRow | undefined> {
  const now = deps.now?.() ?? new Date();
  return deps.db.transaction().execute(async (trx) => {
    const before = await lockDomain(trx, teamId, id);
    if (!before) return undefined;
    const sending = patch.sending ?? before.sending;
    const receiving = patch.receiving ?? before.receiving;
    if (!sending && !receiving) {
      throw new ApiError(
        422,
        'validation_error',
        'At least one of `capabilities.sending` and `capabilities.receiving` must be enabled.',
      );
    }
    const trackingSubdomain =
      patch.trackingSubdomain === undefined ? before.tracking_subdomain : patch.trackingSubdomain;
    const trackingChanged = trackingSubdomain !== before.tracking_subdomain;
    const addedSending = sending && !before.sending;
    const addedReceiving = receiving && !before.receiving;
    const addedTracking = trackingChanged && trackingSubdomain !== null;
    const added = addedSending || addedReceiving || addedTracking;
    const capabilitiesChanged = sending !== before.sending || receiving !== before.receiving;
    let after = await updateDomain(trx, id, {
      open_tracking: patch.openTracking ?? before.open_tracking,
      click_tracking: patch.clickTracking ?? before.click_tracking,
      tracking_subdomain: trackingSubdomain,
      tls: patch.tls ?? before.tls,
      sending,
      receiving,
      // A capability enabled again starts from scratch: its records may have gone meanwhile.
      ...(addedSending ? { sending_verified: false } : {}),
      ...(addedReceiving ? { receiving_verified: false } : {}),
      // A new tracking host has records of its own, not yet looked up.
      ...(trackingChanged ? { tracking_verified: false } : {}),
    });
    const fresh = { status: 'not_started' as const, detail: null };
    await saveRecordStates(
      trx,
      id,
      {
        ...(addedSending ? { dkim: fresh, spf_mx: fresh, spf_txt: fresh } : {}),
        ...(addedReceiving ? { receiving_mx: fresh } : {}),
        ...(trackingChanged ? { tracking_cname: fresh, tracking_caa: fresh } : {}),
      },
      null,
    );
    const states = await recordStates(trx, id);
    if (capabilitiesChanged || trackingChanged) {
      const records = recordSpecsOf(after, deps.infra).map((spec) => ({
        purpose: spec.purpose,
        status: states[spec.kind].status,
      }));
      const enabled = [...(sending ? (['sending'] as const) : []), ...(receiving ? (['receiving'] as const) : [])];
      const firstCheck = new Date(now.getTime() + FIRST_CHECK_DELAY_S * deps.scale * 1000);
      // Tracking records never enter the status: changing only the tracking subdomain keeps it.
      const status = !capabilitiesChanged
        ? after.status
        : after.last_checked_at === null
          ? 'not_started'
          : domainStatus(records, enabled, false);
      after = await updateDomain(trx, id, {
        status,
        ...(added ? { window_started_at: now, checks_in_window: 0, next_check_at: firstCheck } : {}),
      });
      if (added) await scheduleCheck(trx, after, firstCheck);
      await publishEvent(trx, 'domain.updated', after, states, deps.infra);
    }
    await publishState(trx, after);
    return after;
  });
}

/** Removes the domain, its records and history; read models drop it, its timer is cancelled. */
export async function removeDomain(deps: ManageDomainsDeps, teamId: string, id: string): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const domain = await lockDomain(trx, teamId, id);
    if (!domain) return false;
    await deleteLockedDomain(trx, deps, domain);
    return true;
  });
}

/** Deletes a domain locked by the caller, with its domain.deleted, its state's removal and its timer's. */
export async function deleteLockedDomain(
  trx: Transaction<DomainsDb>,
  deps: Pick<ManageDomainsDeps, 'infra'>,
  domain: DomainRow,
): Promise<void> {
  const states = await recordStates(trx, domain.id);
  await deleteDomain(trx, domain.id);
  await publishEvent(trx, 'domain.deleted', domain, states, deps.infra);
  await publishState(trx, domain, true);
  await cancelCheck(trx, domain);
}
