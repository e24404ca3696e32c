import { describe, expect, it, jest } from '@jest/globals';
import { createLogger } from '../logger/logger.ts';
import { createIntervalJob } from './interval-job.ts';

describe('createIntervalJob', () => {
  it('runs on every tick once started, skips a tick while a run is still going, and stops', async () => {
    jest.useFakeTimers();
    try {
      let finish: (() => void) | undefined;
      let runs = 0;
      const job = createIntervalJob({
        name: 'prune',
        everyMs: 1000,
        logger: createLogger({ service: 'test', level: 'silent' }),
        run: () => {
          runs++;
          return new Promise<void>((resolve) => (finish = resolve));
        },
      });
      await jest.advanceTimersByTimeAsync(5000);
      expect(runs).toBe(0);
      job.start();
      await jest.advanceTimersByTimeAsync(1000);
      expect(runs).toBe(1);
      await jest.advanceTimersByTimeAsync(3000); // the first run is still going
      expect(runs).toBe(1);
      finish!();
      await jest.advanceTimersByTimeAsync(1000);
      expect(runs).toBe(2);
      finish!();
      job.stop();
      await jest.advanceTimersByTimeAsync(5000);
      expect(runs).toBe(2);
    } finally {
      jest.useRealTimers();
    }
  });

  it('logs a failed run naming the job and runs again on the next tick', async () => {
    jest.useFakeTimers();
    try {
      const warnings: unknown[] = [];
      const logger = createLogger({ service: 'test', level: 'silent' });
      logger.warn = ((obj: unknown) => warnings.push(obj)) as typeof logger.warn;
      let runs = 0;
      const job = createIntervalJob({
        name: 'prune',
        everyMs: 1000,
        logger,
        run: () => (runs++, Promise.reject(new Error('db down'))),
      });
      job.start();
      await jest.advanceTimersByTimeAsync(2000);
      expect(runs).toBe(2);
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatchObject({ job: 'prune' });
      job.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
