import { describe, expect, it } from '@jest/globals';
import { acceptsReturnPathLocalPart, looksLikeVerp, unsubscribeToken } from './return-path-address.ts';

const VERP = 'b.0190a6f48b4a700080000000000000a1.0.r34l57ry44';

describe('acceptsReturnPathLocalPart', () => {
  it.each([
    [VERP, true],
    [VERP.toUpperCase(), true],
    ['b.0190a6f48b4a700080000000000000a2.x.pdhsy5rwie', true],
    ['unsubscribe', true],
    ['Unsubscribe', true],
    ['abuse', true],
    ['postmaster', true],
    ['b.', false],
    ['b.garbage', false],
    [`${VERP}x`, false],
    ['b.0190a6f48b4a700080000000000000a1.01.r34l57ry44', false],
    ['info', false],
    ['', false],
  ])('%s → %s', (local, accepted) => {
    expect(acceptsReturnPathLocalPart(local)).toBe(accepted);
  });

  it('tells a VERP-shaped address from another', () => {
    expect(looksLikeVerp(`${VERP}@send.acme.test`)).toBe(true);
    expect(looksLikeVerp('abuse@send.acme.test')).toBe(false);
    expect(looksLikeVerp(VERP)).toBe(false);
  });
});

describe('unsubscribeToken', () => {
  const token = `${'A'.repeat(64)}.${'b_-'.repeat(7)}c`;
  it.each([
    [`unsubscribe ${token}`, token],
    [`Re: unsubscribe ${token}`, token],
    [`UNSUBSCRIBE  ${token}.`, token],
    [`"unsubscribe ${token}"`, undefined],
    ['unsubscribe', undefined],
    ['unsubscribe me please', undefined],
    [`please unsubscribe${token}`, undefined],
    ['', undefined],
  ])('%s', (subject, expected) => {
    expect(unsubscribeToken(subject)).toBe(expected);
  });
});
