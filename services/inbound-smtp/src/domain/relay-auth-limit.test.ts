import { describe, expect, it } from '@jest/globals';
import { clientKeyOf, createAuthFailureLimit } from './relay-auth-limit.ts';

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1) + seconds * 1000);
const options = { maxFailures: 3, windowMs: 60_000, lockoutMs: 120_000 };

describe('createAuthFailureLimit', () => {
  it('locks a client out at the failure that reaches the limit, for the lockout, then lets it try again', () => {
    const limit = createAuthFailureLimit(options);
    expect(limit.recordFailure('192.0.2.1', at(0))).toBe(false);
    expect(limit.recordFailure('192.0.2.1', at(1))).toBe(false);
    expect(limit.lockedOut('192.0.2.1', at(2))).toBe(false);
    expect(limit.recordFailure('192.0.2.1', at(2))).toBe(true);
    expect(limit.lockedOut('192.0.2.1', at(3))).toBe(true);
    expect(limit.lockedOut('192.0.2.1', at(121))).toBe(true);
    expect(limit.lockedOut('192.0.2.1', at(123))).toBe(false);
  });

  it('counts failures within the window only', () => {
    const limit = createAuthFailureLimit(options);
    limit.recordFailure('192.0.2.1', at(0));
    limit.recordFailure('192.0.2.1', at(30));
    // The first has left the window: two failures within it, not three.
    expect(limit.recordFailure('192.0.2.1', at(61))).toBe(false);
    expect(limit.lockedOut('192.0.2.1', at(61))).toBe(false);
  });

  it('counts each client apart, an IPv6 /64 as one client', () => {
    const limit = createAuthFailureLimit(options);
    for (let i = 0; i < 3; i++) limit.recordFailure(`2001:db8:1:2::${i + 1}`, at(i));
    expect(limit.lockedOut('2001:db8:1:2:ffff::9', at(5))).toBe(true);
    expect(limit.lockedOut('2001:db8:1:3::1', at(5))).toBe(false);
    expect(limit.lockedOut('192.0.2.1', at(5))).toBe(false);
  });

  it('forgets the oldest clients past its size, so many addresses cannot exhaust memory', () => {
    const limit = createAuthFailureLimit({ ...options, maxFailures: 1, maxClients: 2 });
    limit.recordFailure('192.0.2.1', at(0));
    limit.recordFailure('192.0.2.2', at(1));
    limit.recordFailure('192.0.2.3', at(2));
    expect(limit.lockedOut('192.0.2.1', at(3))).toBe(false);
    expect(limit.lockedOut('192.0.2.2', at(3))).toBe(true);
    expect(limit.lockedOut('192.0.2.3', at(3))).toBe(true);
  });
});

describe('clientKeyOf', () => {
  it('keys IPv4 (also IPv4-mapped) by address and IPv6 by its /64', () => {
    expect(clientKeyOf('192.0.2.7')).toBe('192.0.2.7');
    expect(clientKeyOf('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientKeyOf('2001:db8:a:b:1:2:3:4')).toBe('2001:db8:a:b::/64');
    expect(clientKeyOf('2001:db8:a:b::')).toBe('2001:db8:a:b::/64');
  });
});
