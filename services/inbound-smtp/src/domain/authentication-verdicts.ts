// A received email's `authentication` (Resend's received-email field: pass|fail|gray|processing_failed|unknown) from
// the result keywords of the SPF, DKIM and DMARC checks (RFC 8601 §2.7). The mapping:
//
//   pass                           → pass
//   fail                           → fail               (hard fail: the check says the mail is not authentic)
//   softfail, neutral, policy      → gray               (an answer that neither passes nor fails the mail)
//   temperror, permerror           → processing_failed  (the check could not be made: DNS error, broken record)
//   none, skipped, declined, none given → unknown       (nothing to check: no record, no signature)

export type AuthVerdict = 'pass' | 'fail' | 'gray' | 'processing_failed' | 'unknown';

export type AuthVerdicts = { spf: AuthVerdict; dkim: AuthVerdict; dmarc: AuthVerdict };

const VERDICTS: Record<string, AuthVerdict> = {
  pass: 'pass',
  fail: 'fail',
  softfail: 'gray',
  neutral: 'gray',
  policy: 'gray',
  temperror: 'processing_failed',
  temperr: 'processing_failed',
  permerror: 'processing_failed',
  none: 'unknown',
  skipped: 'unknown',
  declined: 'unknown',
};

/** One check's verdict from its result keyword (any case); an unknown or absent keyword is `unknown`. */
export function verdictOf(result: string | undefined): AuthVerdict {
  return (result && VERDICTS[result.toLowerCase()]) || 'unknown';
}

/** Which verdict a message with several DKIM signatures gets: one that passes is enough (as for DMARC). */
const DKIM_PRECEDENCE: AuthVerdict[] = ['pass', 'fail', 'gray', 'processing_failed', 'unknown'];

/** DKIM's verdict over every signature's result: the first of pass, fail, gray, processing_failed found. */
export function dkimVerdict(results: readonly (string | undefined)[]): AuthVerdict {
  const verdicts = new Set(results.map(verdictOf));
  return DKIM_PRECEDENCE.find((verdict) => verdicts.has(verdict)) ?? 'unknown';
}

/** Every check `processing_failed`: the authenticator itself failed (never a reason to refuse the mail). */
export const AUTHENTICATION_FAILED: AuthVerdicts = {
  spf: 'processing_failed',
  dkim: 'processing_failed',
  dmarc: 'processing_failed',
};
