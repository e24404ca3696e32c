import { describe, expect, it } from '@jest/globals';
import type { KeyWithTeam } from './api-keys.ts';
import { createKeyCache } from './key-cache.ts';

const key = (id: string): KeyWithTeam => ({
  id,
  team_id: 'team',
  permission: 'full_access',
  domain_id: null,
  expires_at: null,
  revoked_at: null,
  last_used_at: null,
  access_enabled: true,
  rate_limit_per_second: null,
});

/** A cache over a table the test edits, counting loads. */
function setup(opts: { ttlMs?: number; maxEntries?: number } = {}) {
  const table = new Map<string, KeyWithTeam>([
    ['h1', key('k1')],
    ['h2', key('k2')],
  ]);
  let loads = 0;
  let clock = 0;
  let beforeLoad: (() => void) | undefined;
  const cache = createKeyCache({
    load: (hash) => {
      loads++;
      beforeLoad?.();
      return Promise.resolve(table.get(hash));
    },
    now: () => clock,
    ...opts,
  });
  return {
    cache,
    table,
    loads: () => loads,
    tick: (ms: number) => (clock += ms),
    onLoad: (f: () => void) => (beforeLoad = f),
  };
}

describe('the API key cache', () => {
  it('reads every request from the database until it is trusted', async () => {
    const t = setup();
    await t.cache.find('h1');
    await t.cache.find('h1');
    expect(t.loads()).toBe(2);
    t.cache.setTrusted(true);
    await t.cache.find('h1');
    await t.cache.find('h1');
    expect(t.loads()).toBe(3);
  });

  it('forgets everything on a change notification and when trust is lost', async () => {
    const t = setup();
    t.cache.setTrusted(true);
    await t.cache.find('h1');
    t.table.set('h1', { ...key('k1'), revoked_at: new Date() });
    t.cache.invalidate();
    expect((await t.cache.find('h1'))?.revoked_at).toBeInstanceOf(Date);
    t.cache.setTrusted(false);
    expect(t.cache.size()).toBe(0);
    await t.cache.find('h1');
    expect(t.cache.size()).toBe(0);
  });

  it('does not store a key read while a change was being announced', async () => {
    const t = setup();
    t.cache.setTrusted(true);
    // The row was read before the revoke committed, the notification arrived before the read returned.
    t.onLoad(() => t.cache.invalidate());
    await t.cache.find('h1');
    expect(t.cache.size()).toBe(0);
  });

  it('never caches an unknown token, so a key created later works at once', async () => {
    const t = setup();
    t.cache.setTrusted(true);
    expect(await t.cache.find('h3')).toBeUndefined();
    t.table.set('h3', key('k3'));
    expect((await t.cache.find('h3'))?.id).toBe('k3');
  });

  it('bounds the age and the number of entries', async () => {
    const t = setup({ ttlMs: 1000, maxEntries: 1 });
    t.cache.setTrusted(true);
    await t.cache.find('h1');
    t.tick(999);
    await t.cache.find('h1');
    expect(t.loads()).toBe(1);
    t.tick(1);
    await t.cache.find('h1');
    expect(t.loads()).toBe(2);
    await t.cache.find('h2');
    expect(t.cache.size()).toBe(1);
  });
});
