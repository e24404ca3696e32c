import { describe, expect, it } from '@jest/globals';
import { loadOnFirstUse } from './load-on-first-use.ts';

describe('loadOnFirstUse', () => {
  it('loads nothing until asked, then once for every caller', async () => {
    let loads = 0;
    const load = loadOnFirstUse(() => Promise.resolve({ n: ++loads }));
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([load(), load()]);
    expect(await load()).toBe(a);
    expect(b).toBe(a);
    expect(loads).toBe(1);
  });

  it('tries again after a load that failed', async () => {
    let loads = 0;
    const load = loadOnFirstUse(() => {
      loads += 1;
      return loads === 1 ? Promise.reject(new Error('not yet')) : Promise.resolve('loaded');
    });
    await expect(load()).rejects.toThrow('not yet');
    expect(await load()).toBe('loaded');
    expect(await load()).toBe('loaded');
    expect(loads).toBe(2);
  });
});
