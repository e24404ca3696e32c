// Domain claims, the pure part: the TXT record that proves control of a domain, how long a claim waits
// for it, and whether a lookup found it.
import type { Lookup, TxtAnswer } from './verification.ts';

/** A claim not verified within 7 days expires. */
export const CLAIM_LIFETIME_S = 7 * 24 * 3600;

/** The TXT record's value: what the claiming team publishes at the domain's own name. */
export function claimRecordValue(token: string): string {
  return `postline-domain-verification=${token}`;
}

/** Whether the TXT set at the domain's name holds the value (a record split in chunks counts joined). */
export function claimProven(lookup: Lookup<TxtAnswer>, value: string): boolean {
  return lookup.ok && lookup.answers.some((chunks) => chunks.join('') === value);
}

/** The settings a claim creates the domain with; a second claim with the same ones is the same claim. */
export type ClaimSettings = {
  region: string;
  custom_return_path: string;
  open_tracking: boolean;
  click_tracking: boolean;
  tracking_subdomain: string | null;
};

export function sameSettings(a: ClaimSettings, b: ClaimSettings): boolean {
  return (
    a.region === b.region &&
    a.custom_return_path === b.custom_return_path &&
    a.open_tracking === b.open_tracking &&
    a.click_tracking === b.click_tracking &&
    a.tracking_subdomain === b.tracking_subdomain
  );
}
