// The reputation guard's lines set for one team by the operator (`npm run admin -- team set-reputation`),
// over the install's (the sender's REPUTATION_* variables). docs/reputation.md says what each line means.
import { z } from 'zod';

/** The lines a team may have of its own, as the API and the admin CLI name them. */
export const REPUTATION_THRESHOLD_NAMES = ['bounce_rate', 'complaint_rate', 'window', 'min_sends'] as const;
export type ReputationThresholdName = (typeof REPUTATION_THRESHOLD_NAMES)[number];

/** A rate line, as a fraction: above 0, at most 1 (0.04 is 4%). */
export const ReputationRate = z.number().gt(0).lte(1);

/** The largest window (and minimum) in sends: ten buckets of 100,000. */
export const MAX_REPUTATION_WINDOW = 1_000_000;

/** A window or minimum volume, in sends. */
export const ReputationSends = z.number().int().min(1).max(MAX_REPUTATION_WINDOW);

/** A team's own lines; null for each it takes from the install. */
export const TeamReputationThresholds = z.strictObject({
  bounce_rate: ReputationRate.nullable(),
  complaint_rate: ReputationRate.nullable(),
  window: ReputationSends.nullable(),
  min_sends: ReputationSends.nullable(),
});
export type TeamReputationThresholds = z.infer<typeof TeamReputationThresholds>;

/** The internal path where the gateway pushes a team's lines to the sender (the team in the gateway's header). */
export const TEAM_REPUTATION_PATH = '/internal/team-reputation';

/**
 * The gateway's push of a team's lines to the sender (PUT TEAM_REPUTATION_PATH). `changed_at` orders pushes:
 * the sender keeps the latest change it was told of. All null: the team takes the install's lines again.
 */
export const TeamReputationUpdate = z.strictObject({
  thresholds: TeamReputationThresholds,
  changed_at: z.iso.datetime({ offset: true }),
});
export type TeamReputationUpdate = z.infer<typeof TeamReputationUpdate>;
