import { describe, expect, it } from '@jest/globals';
import { routeRecipient, type KnownDomain } from './recipient-routing.ts';

const receiving: KnownDomain = {
  team_id: 'team-a',
  name: 'in.example.com',
  return_path: 'send.in.example.com',
  receiving_verified: true,
};
const pending: KnownDomain = {
  team_id: 'team-b',
  name: 'pending.example.com',
  return_path: 'send.pending.example.com',
  receiving_verified: false,
};

describe('routeRecipient', () => {
  it("takes a verified receiving domain's mail for its team", () => {
    expect(routeRecipient('anyone', 'in.example.com', [receiving])).toEqual({ kind: 'received', teamId: 'team-a' });
  });

  it('takes VERP and unsubscribe mailboxes at a return path, and nothing else there', () => {
    expect(
      routeRecipient('b.0195f3a27c1e7b3a9d4e2f6a8b0c1d2e.0.abcdefghij', 'send.in.example.com', [receiving]),
    ).toEqual({
      kind: 'return-path',
      teamId: 'team-a',
      returnPath: 'send.in.example.com',
    });
    expect(routeRecipient('Unsubscribe', 'send.pending.example.com', [pending])).toMatchObject({
      kind: 'return-path',
      teamId: 'team-b',
    });
    expect(routeRecipient('info', 'send.in.example.com', [receiving])).toEqual({
      kind: 'refused',
      reason: 'not-a-return-path-mailbox',
    });
  });

  it('refuses a domain whose receiving is not verified, and one that is not ours', () => {
    expect(routeRecipient('x', 'pending.example.com', [pending])).toEqual({ kind: 'refused', reason: 'not-receiving' });
    expect(routeRecipient('x', 'gmail.com', [])).toEqual({ kind: 'refused', reason: 'unknown' });
  });

  it('prefers the verified one when two teams hold the name', () => {
    const claimed = { ...pending, name: 'in.example.com' };
    expect(routeRecipient('x', 'in.example.com', [claimed, receiving])).toEqual({ kind: 'received', teamId: 'team-a' });
  });
});
