import { describe, expect, it } from '@jest/globals';
import { sandboxResult } from './sandbox.ts';

describe('sandbox addresses', () => {
  it('stand for their outcome, with +label except for suppressed@', () => {
    expect(sandboxResult('delivered+x@postline.test').kind).toBe('delivered');
    expect(sandboxResult('complained@postline.test').kind).toBe('complained');
    expect(sandboxResult('suppressed@postline.test')).toEqual({ kind: 'suppressed', reason: 'previous_bounce' });
    expect(sandboxResult('bounced+y@postline.test')).toMatchObject({
      kind: 'bounced',
      code: 550,
      bounce: { type: 'Permanent', suppress: false },
    });
    // suppressed@ takes no label, and an unknown mailbox does not exist.
    expect(sandboxResult('suppressed+z@postline.test')).toMatchObject({
      kind: 'bounced',
      bounce: { subType: 'NoEmail' },
    });
    expect(sandboxResult('nobody@postline.test')).toMatchObject({ kind: 'bounced', bounce: { subType: 'NoEmail' } });
  });
});
