// Approval before send (Postline's): under the team's `require_approval` setting, a member's send or schedule
// puts the broadcast in `awaiting_approval` (use-cases/broadcasts.ts startSending); an admin approves it (it
// then sends, or is scheduled for the time the member asked, or now if that time has passed) or rejects it
// (back to draft, with the reason). An API key acts as an admin (only full-access keys reach broadcasts).
// The gateway's audit log records each request with its actor (broadcasts.send, .approve, .reject,
// .settings_updated).
import { ApiError, validationError } from '@postline/platform';
import { findBroadcastSettings, updateBroadcast, upsertBroadcastSettings } from '../db/broadcasts.ts';
import {
  lockTeamBroadcast,
  NO_APPROVAL_REQUEST,
  startSending,
  type Actor,
  type BroadcastDeps,
  type SendOutcome,
} from './broadcasts.ts';

export type BroadcastSettings = { require_approval: boolean };

export async function getBroadcastSettings(deps: BroadcastDeps, teamId: string): Promise<BroadcastSettings> {
  return findBroadcastSettings(deps.db, teamId);
}

export async function changeBroadcastSettings(
  deps: BroadcastDeps,
  teamId: string,
  actor: Actor,
  change: Partial<BroadcastSettings>,
): Promise<BroadcastSettings> {
  requireAdmin(actor, 'Only an admin can change the broadcast settings.');
  const current = await findBroadcastSettings(deps.db, teamId);
  const next = { require_approval: change.require_approval ?? current.require_approval };
  await upsertBroadcastSettings(deps.db, teamId, next, deps.now());
  return next;
}

/** Approves a broadcast awaiting approval: it sends now, or is scheduled for the time asked (if still ahead). */
export async function approveBroadcast(
  deps: BroadcastDeps,
  teamId: string,
  id: string,
  actor: Actor,
): Promise<SendOutcome> {
  requireAdmin(actor, 'Only an admin can approve a broadcast.');
  return deps.db.transaction().execute(async (trx) => {
    const broadcast = await lockTeamBroadcast(trx, teamId, id);
    if (broadcast.status !== 'awaiting_approval') {
      throw validationError('Only a broadcast awaiting approval can be approved.', 403);
    }
    const at = broadcast.approval_scheduled_at;
    const scheduledAt = at !== null && at.getTime() > deps.now().getTime() ? at.toISOString() : undefined;
    return startSending(deps, trx, broadcast, scheduledAt, actor);
  });
}

/** Rejects a broadcast awaiting approval: back to draft, with the reason for the member who asked. */
export async function rejectBroadcast(
  deps: BroadcastDeps,
  teamId: string,
  id: string,
  actor: Actor,
  reason: string | undefined,
): Promise<void> {
  requireAdmin(actor, 'Only an admin can reject a broadcast.');
  await deps.db.transaction().execute(async (trx) => {
    const broadcast = await lockTeamBroadcast(trx, teamId, id);
    if (broadcast.status !== 'awaiting_approval') {
      throw validationError('Only a broadcast awaiting approval can be rejected.', 403);
    }
    await updateBroadcast(trx, broadcast.team_id, broadcast.id, {
      status: 'draft',
      ...NO_APPROVAL_REQUEST,
      rejected_by: actor?.id ?? null,
      rejected_at: deps.now(),
      rejection_reason: reason?.trim() || null,
    });
  });
}

function requireAdmin(actor: Actor, message: string): void {
  if (actor?.role === 'member') throw new ApiError(403, 'invalid_permission', message);
}
