// The reputation guard's rules, without I/O: which outcomes count, how the window of the last sends is cut
// into buckets, when a window is over the line, and what a refused send is told. docs/reputation.md says
// why the defaults are what they are.

/** The lines in force (REPUTATION_* variables, or a team's own): rates as fractions, the window and its minimum in sends. */
export type ReputationThresholds = {
  /** Above this share of hard bounces among the window's sends, sending pauses. Default 0.04 (4%). */
  bounceRate: number;
  /** Above this share of complaints among the window's sends, sending pauses. Default 0.0008 (0.08%). */
  complaintRate: number;
  /** The window: the last this many sends (delivered or bounced recipients). */
  window: number;
  /** A window with fewer sends than this is never judged. */
  minSends: number;
};

export const DEFAULT_THRESHOLDS: ReputationThresholds = {
  bounceRate: 0.04,
  complaintRate: 0.0008,
  window: 10_000,
  minSends: 2_500,
};

/** The lines the operator set for one team (`npm run admin -- team set-reputation`); null: the install's. */
export type TeamThresholds = {
  bounceRate: number | null;
  complaintRate: number | null;
  window: number | null;
  minSends: number | null;
};

/** A line as the API names it. */
export type ThresholdName = 'bounce_rate' | 'complaint_rate' | 'window' | 'min_sends';

/**
 * The lines in force for a team: each it has of its own, else the install's. A minimum above the window
 * counts as the window: a window holds no more sends than that, so a higher minimum would never be reached
 * and the team never judged.
 */
export function thresholdsOf(install: ReputationThresholds, own?: TeamThresholds): ReputationThresholds {
  const window = own?.window ?? install.window;
  return {
    bounceRate: own?.bounceRate ?? install.bounceRate,
    complaintRate: own?.complaintRate ?? install.complaintRate,
    window,
    minSends: Math.min(own?.minSends ?? install.minSends, window),
  };
}

/** The lines the operator set for the team, by their API names, in the API's order. */
export function linesSetFor(own?: TeamThresholds): ThresholdName[] {
  if (!own) return [];
  const set: [ThresholdName, number | null][] = [
    ['bounce_rate', own.bounceRate],
    ['complaint_rate', own.complaintRate],
    ['window', own.window],
    ['min_sends', own.minSends],
  ];
  return set.flatMap(([name, value]) => (value === null ? [] : [name]));
}

/** The window is this many buckets; the oldest is dropped as a new one opens. */
export const BUCKETS = 10;

/** Sends per bucket: a tenth of the window (at least one). */
export function bucketSize(window: number): number {
  return Math.max(1, Math.ceil(window / BUCKETS));
}

/** The bucket the next sends go to, after `totalSends` sends folded before. */
export function bucketOf(totalSends: number, window: number): number {
  return Math.floor(totalSends / bucketSize(window));
}

/** What a team's or a domain's window holds. */
export type WindowCounts = { sends: number; bounces: number; complaints: number };

/** The window's rates, as fractions (0 with nothing sent). */
export function ratesOf(counts: WindowCounts): { bounceRate: number; complaintRate: number } {
  if (counts.sends === 0) return { bounceRate: 0, complaintRate: 0 };
  return { bounceRate: counts.bounces / counts.sends, complaintRate: counts.complaints / counts.sends };
}

export type PauseReason = 'bounce_rate' | 'complaint_rate';

/**
 * Why the window's sending must pause, or undefined: only a window of at least `minSends`, and only a rate
 * strictly above its line. Complaints are judged first: they cost a sender's reputation most.
 */
export function pauseReasonOf(counts: WindowCounts, thresholds: ReputationThresholds): PauseReason | undefined {
  if (counts.sends < thresholds.minSends) return undefined;
  const rates = ratesOf(counts);
  if (rates.complaintRate > thresholds.complaintRate) return 'complaint_rate';
  if (rates.bounceRate > thresholds.bounceRate) return 'bounce_rate';
  return undefined;
}

/** What one recorded outcome adds to its team's and domain's windows. */
export type OutcomeCounts = WindowCounts;

/**
 * What recipients' outcomes add: a delivered or bounced recipient is a send; a hard (Permanent) bounce is
 * also a bounce; a complaint is a complaint. A Transient bounce (retries given up on a full mailbox, say)
 * is a send but not a bounce, as bounce rates are reckoned by Resend and SES.
 */
export function countOutcomes(outcomes: {
  delivered: number;
  bounced: readonly { type: string }[];
  complained: number;
}): OutcomeCounts {
  return {
    sends: outcomes.delivered + outcomes.bounced.length,
    bounces: outcomes.bounced.filter((bounce) => bounce.type === 'Permanent').length,
    complaints: outcomes.complained,
  };
}

/** A pause as a refused send and the dashboard describe it. */
export type SendingPause = {
  scope: 'team' | 'domain';
  domain: string | null;
  reason: PauseReason;
  sends: number;
  bounce_rate: number;
  complaint_rate: number;
  /** The line the rate crossed (a fraction). */
  line: number;
};

/** A rate as people read it: 4%, 0.08%, 12.5%. */
export function percent(rate: number): string {
  return `${Number((rate * 100).toPrecision(3))}%`;
}

/** The message of a send refused with 403 `sending_paused`: what is paused, why, and how it resumes. */
export function pausedMessage(pause: SendingPause): string {
  const what = pause.scope === 'team' ? "Your team's sending" : `Sending from ${pause.domain ?? 'this domain'}`;
  const measured =
    pause.reason === 'bounce_rate'
      ? `a bounce rate of ${percent(pause.bounce_rate)} over its last ${pause.sends} sends, above the ${percent(pause.line)} line`
      : `a complaint rate of ${percent(pause.complaint_rate)} over its last ${pause.sends} sends, above the ${percent(pause.line)} line`;
  return `${what} is paused by the reputation guard: ${measured}. Emails already queued wait and go out after a resume. Clean your list, then an admin resumes sending in the dashboard or with POST /reputation/resume.`;
}
