import { describe, expect, it } from '@jest/globals';
import { isDatabaseUnavailable } from './db.ts';

describe('isDatabaseUnavailable', () => {
  it('recognises a database that cannot be reached or dropped the connection', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '08006', '08001', '57P01', '57P03', '53300']) {
      expect([code, isDatabaseUnavailable(Object.assign(new Error('x'), { code }))]).toEqual([code, true]);
    }
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    // What a rollback on a broken connection throws, without a code.
    expect(isDatabaseUnavailable(new Error('Client has encountered a connection error and is not queryable'))).toBe(
      true,
    );
  });

  it('leaves a fault of the statement or its data to the caller', () => {
    for (const code of ['23505', '22P02', '42P01', '40001']) {
      expect([code, isDatabaseUnavailable(Object.assign(new Error('x'), { code }))]).toEqual([code, false]);
    }
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});
