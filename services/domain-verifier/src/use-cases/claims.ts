// Domain claims (POST /domains/claim, GET /domains/{id}/claim, POST /domains/{id}/claim/verify): a team
// proves with a TXT record at the domain's name that it controls a domain another team registered, and
// takes it over. The domain is then made again under the claiming team with a fresh DKIM key (the other
// team's records cannot be reused) and the id the claim announced; the other team's domain is deleted with
// its domain.deleted, in the same transaction.
import { randomBytes } from 'node:crypto';
import { newId, notFound, validationError } from '@postline/platform';
import { generateDkimKey } from '../crypto/dkim-key.ts';
import {
  findClaim,
  insertClaim,
  lockClaim,
  lockDomainByName,
  ownerOfName,
  pendingClaimsOf,
  supersedeClaims,
  updateClaim,
} from '../db/claims.ts';
import type { DomainClaimRow } from '../db/schema.ts';
import type { DnsLookup } from '../dns/lookup.ts';
import { CLAIM_LIFETIME_S, claimProven, claimRecordValue, sameSettings, type ClaimSettings } from '../domain/claims.ts';
import { deleteLockedDomain, insertNewDomain, type ManageDomainsDeps, type NewDomain } from './domains.ts';

export type ClaimDeps = ManageDomainsDeps & { dns: DnsLookup };

export const CLAIM_NOT_FOUND = 'Domain claim not found';

/**
 * Starts a claim of a name another team has registered: 201 with a new claim, or 200 with the team's
 * pending claim of the name when it asked for the same settings (a pending claim with other settings is
 * superseded by the new one). A name nobody has, or the team's own, is refused.
 */
export async function createClaim(
  deps: ClaimDeps,
  teamId: string,
  input: NewDomain,
): Promise<{ claim: DomainClaimRow; created: boolean }> {
  const owner = await ownerOfName(deps.db, input.name);
  if (owner === undefined) {
    throw validationError(
      `The \`${input.name}\` domain is not registered by another team: add it with POST /domains instead.`,
      422,
    );
  }
  if (owner === teamId) throw validationError(`The \`${input.name}\` domain is already registered by your team.`, 422);
  const now = deps.now?.() ?? new Date();
  const settings = settingsOf(input);
  return deps.db.transaction().execute(async (trx) => {
    const pending = (await pendingClaimsOf(trx, teamId, input.name)).filter((claim) => claim.expires_at > now);
    const same = pending.find((claim) => sameSettings(claim, settings));
    if (same) return { claim: same, created: false };
    for (const claim of pending) await updateClaim(trx, claim.id, { status: 'superseded' }, now);
    const claim = await insertClaim(trx, {
      id: newId(),
      team_id: teamId,
      domain_id: newId(),
      name: input.name,
      zone: input.zone,
      ...settings,
      token: randomBytes(24).toString('hex'),
      status: 'pending',
      failure_reason: null,
      created_at: now,
      expires_at: new Date(now.getTime() + CLAIM_LIFETIME_S * 1000),
      updated_at: now,
    });
    return { claim, created: true };
  });
}

/** The team's latest claim for the domain id it announced (a pending claim past its time is expired). */
export async function readClaim(deps: ClaimDeps, teamId: string, domainId: string): Promise<DomainClaimRow> {
  const claim = await findClaim(deps.db, teamId, domainId);
  if (!claim) throw notFound(CLAIM_NOT_FOUND);
  const now = deps.now?.() ?? new Date();
  return claim.status === 'pending' && claim.expires_at <= now
    ? updateClaim(deps.db, claim.id, { status: 'expired' }, now)
    : claim;
}

/**
 * Looks the TXT record up (the resolvers domains are verified through) and, when it is there, completes
 * the claim: the other team's domain deleted, the domain made under the claiming team, every other pending
 * claim of the name superseded. Without the record the claim stays pending. Answers once that is stored.
 */
export async function verifyClaim(deps: ClaimDeps, teamId: string, domainId: string): Promise<DomainClaimRow> {
  const claim = await readClaim(deps, teamId, domainId);
  if (claim.status !== 'pending') return claim;
  const lookup = await deps.dns.txt(claim.name);
  if (!claimProven(lookup, claimRecordValue(claim.token))) return claim;
  const key = await generateDkimKey();
  return deps.db.transaction().execute(async (trx) => {
    const locked = await lockClaim(trx, teamId, domainId);
    // Verified by another request meanwhile, or superseded by another team's claim.
    if (!locked || locked.id !== claim.id || locked.status !== 'pending') return locked ?? claim;
    const now = deps.now?.() ?? new Date();
    const current = await lockDomainByName(trx, claim.name);
    if (current && current.team_id !== teamId) await deleteLockedDomain(trx, deps, current);
    if (!current || current.team_id !== teamId) {
      await insertNewDomain(trx, deps, {
        id: claim.domain_id,
        teamId,
        input: newDomainOf(claim),
        key,
        now,
      });
    }
    await supersedeClaims(trx, claim.name, now);
    return updateClaim(trx, claim.id, { status: 'completed' }, now);
  });
}

/** The wire form of a claim (Resend's DomainClaim). */
export function claimBody(claim: DomainClaimRow, formatTimestamp: (at: Date) => string) {
  return {
    object: 'domain_claim',
    id: claim.id,
    name: claim.name,
    status: claim.status,
    domain_id: claim.domain_id,
    region: claim.region,
    record: { type: 'TXT', name: claim.name, value: claimRecordValue(claim.token), ttl: 'Auto' },
    blocked_reason: null,
    failure_reason: claim.failure_reason,
    created_at: formatTimestamp(claim.created_at),
    expires_at: formatTimestamp(claim.expires_at),
  };
}

function settingsOf(input: NewDomain): ClaimSettings {
  return {
    region: input.region,
    custom_return_path: input.customReturnPath,
    open_tracking: input.openTracking,
    click_tracking: input.clickTracking,
    tracking_subdomain: input.trackingSubdomain,
  };
}

/** The domain a completed claim makes: sending enabled, as POST /domains makes it by default. */
function newDomainOf(claim: DomainClaimRow): NewDomain {
  return {
    name: claim.name,
    zone: claim.zone,
    region: claim.region,
    customReturnPath: claim.custom_return_path,
    openTracking: claim.open_tracking,
    clickTracking: claim.click_tracking,
    trackingSubdomain: claim.tracking_subdomain,
    tls: 'opportunistic',
    sending: true,
    receiving: false,
  };
}
