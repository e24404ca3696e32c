import { describe, expect, it } from '@jest/globals';
import { DomainState } from './messages.ts';

// A state as the domain-verifier published it before the tracking fields existed.
const older = {
  domain_id: '0195f3a2-7c1e-7b3a-9d4e-2f6a8b0c1d2e',
  team_id: '0195f3a2-0000-7000-8000-000000000001',
  name: 'example.com',
  status: 'verified',
  capabilities: { sending: 'enabled', receiving: 'disabled' },
  dkim_selector: 'postline-abcdefgh',
  dkim_private_key_encrypted: 'sealed',
  return_path: 'send.example.com',
  sending_verified: true,
  receiving_verified: false,
  tls: 'opportunistic',
  open_tracking: true,
  click_tracking: true,
  deleted: false,
};

describe('DomainState', () => {
  it('still accepts states without the tracking fields', () => {
    const parsed = DomainState.parse(older);
    expect(parsed.tracking_verified).toBeUndefined();
    expect(parsed.tracking_subdomain).toBeUndefined();
  });

  it('carries the tracking subdomain and whether its records are verified', () => {
    expect(DomainState.parse({ ...older, tracking_subdomain: 'links', tracking_verified: true })).toMatchObject({
      tracking_subdomain: 'links',
      tracking_verified: true,
    });
    expect(
      DomainState.parse({ ...older, tracking_subdomain: null, tracking_verified: false }).tracking_subdomain,
    ).toBeNull();
    expect(DomainState.safeParse({ ...older, tracking_verified: 'yes' }).success).toBe(false);
  });
});
