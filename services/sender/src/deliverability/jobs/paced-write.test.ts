import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { createPacedWrite } from './paced-write.ts';

describe('a write asked for at once', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('runs at once, then at most once per gap however often it is asked', async () => {
    let runs = 0;
    const paced = createPacedWrite(() => Promise.resolve(void runs++), 500);
    await paced.ask();
    expect(runs).toBe(1);
    // A burst within the gap: one run, at its end, that every ask waits for.
    const asks = Array.from({ length: 1000 }, () => paced.ask());
    expect(runs).toBe(1);
    await jest.advanceTimersByTimeAsync(499);
    expect(runs).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(runs).toBe(2);
    await Promise.all(asks);
    // Asked again within the gap of that run: waits for its end.
    await jest.advanceTimersByTimeAsync(200);
    void paced.ask();
    expect(runs).toBe(2);
    await jest.advanceTimersByTimeAsync(300);
    expect(runs).toBe(3);
    // Asked after a quiet gap: at once.
    await jest.advanceTimersByTimeAsync(2000);
    await paced.ask();
    expect(runs).toBe(4);
  });

  it('drops the run not begun when stopped, and its asks go on', async () => {
    let runs = 0;
    const paced = createPacedWrite(() => Promise.resolve(void runs++), 500);
    await paced.ask();
    const asked = paced.ask();
    paced.stop();
    await asked;
    await jest.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(1);
  });
});
