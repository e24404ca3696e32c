// GET /deliverability/providers: the running sender processes' traffic shaping, per provider.
import type { Kysely } from 'kysely';
import type { SenderDb } from '../../db/schema.ts';
import { readFreshShapingRows } from '../db/provider-shaping.ts';
import { shapingViewOf, SNAPSHOT_STALE_MS, type ShapingView } from '../domain/provider-shaping.ts';

/** Install-wide, not per team: every team's mail to a provider goes through the same processes. */
export async function readProviderShaping(db: Kysely<SenderDb>): Promise<ShapingView> {
  return shapingViewOf(await readFreshShapingRows(db, SNAPSHOT_STALE_MS));
}
