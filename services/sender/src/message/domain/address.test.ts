import { describe, expect, it } from '@jest/globals';
import { parseMailbox } from './address.ts';

describe('parseMailbox', () => {
  it('returns null for a non-mailbox and the parts for a mailbox', () => {
    expect(parseMailbox('nope')).toBeNull();
    expect(parseMailbox('<a@Example.COM>')).toEqual({ name: null, address: 'a@example.com' });
    expect(parseMailbox('Jane Doe<Jane.Doe+tag@example.com>')).toEqual({
      name: 'Jane Doe',
      address: 'Jane.Doe+tag@example.com',
    });
  });
});
