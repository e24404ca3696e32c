// How long rows that grow with traffic are kept (emails, logs, events, received mail), per team.
import { z } from 'zod';

/** A team's retention unless the operator set its own: 30 days, as Resend keeps them. */
export const DEFAULT_RETENTION_DAYS = 30;

/** The longest retention the operator may set (about ten years). */
export const MAX_RETENTION_DAYS = 3650;

export const RetentionDays = z.number().int().min(1).max(MAX_RETENTION_DAYS);

/**
 * The gateway's push of a team's retention to an owner (PUT /internal/team-retention, the team in the
 * gateway's header). `changed_at` orders pushes: an owner keeps the latest change it was told of.
 */
export const TeamRetentionUpdate = z.strictObject({
  days: RetentionDays,
  changed_at: z.iso.datetime({ offset: true }),
});
export type TeamRetentionUpdate = z.infer<typeof TeamRetentionUpdate>;
