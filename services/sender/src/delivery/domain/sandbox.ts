import type { RecipientResult } from './recipient-result.ts';

/**
 * The result a sandbox address stands for (at postline.test as at Resend's resend.dev): `delivered@`, `bounced@` (550 5.1.1),
 * `complained@` (delivered, then a complaint) with an optional `+label`, and `suppressed@` without one.
 * Any other address at the domain bounces as a mailbox that does not exist. Sandbox bounces and complaints
 * never join the suppression list, so the same address can be used in every test run.
 */
export function sandboxResult(address: string): RecipientResult {
  const local = address.slice(0, address.lastIndexOf('@')).toLowerCase();
  const base = local.split('+')[0];
  const labelled = local.includes('+');
  if (base === 'delivered') return { kind: 'delivered', code: 250, response: '2.0.0 OK (sandbox)' };
  if (base === 'complained') return { kind: 'complained' };
  if (base === 'suppressed' && !labelled) return { kind: 'suppressed', reason: 'previous_bounce' };
  if (base === 'bounced') {
    return {
      kind: 'bounced',
      code: 550,
      response: '5.1.1 The email account that you tried to reach does not exist (sandbox)',
      bounce: { type: 'Permanent', subType: 'General', suppress: false },
    };
  }
  return {
    kind: 'bounced',
    code: 550,
    response: '5.1.1 No such sandbox mailbox; use delivered@, bounced@, complained@ or suppressed@',
    bounce: { type: 'Permanent', subType: 'NoEmail', suppress: false },
  };
}
