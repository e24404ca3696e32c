import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it, jest } from '@jest/globals';
import { createLogger } from '../logger/logger.ts';
import { createMetrics } from '../http/metrics.ts';
import { collectAndShrink, createMemoryTrim } from './memory-trim.ts';

const MB = 1024 * 1024;
const logger = createLogger({ service: 'test', level: 'silent' });

/** A process whose CPU time and new space the test sets; its collection shrinks the new space to 1 MB. */
function fakeProcess() {
  const state = { cpuMicros: 0, newSpace: 32 * MB, collections: 0 };
  return {
    state,
    probe: { cpuMicros: () => state.cpuMicros, newSpaceBytes: () => state.newSpace },
    collect: () => {
      state.collections++;
      state.newSpace = 1 * MB;
    },
  };
}

describe('createMemoryTrim', () => {
  it('trims a grown new space once the process is idle, once per idle period, and counts it', async () => {
    jest.useFakeTimers();
    try {
      const p = fakeProcess();
      const metrics = createMetrics('test');
      const trim = createMemoryTrim({ logger, metrics, everyMs: 1000, probe: p.probe, collect: p.collect });
      // Started: the new space its modules grew is trimmed at once.
      trim.start();
      expect(p.state.collections).toBe(1);
      // Busy: 500 ms of CPU in each second, and a new space grown by the work: left alone.
      p.state.newSpace = 64 * MB;
      for (let i = 0; i < 3; i++) {
        p.state.cpuMicros += 500_000;
        await jest.advanceTimersByTimeAsync(1000);
      }
      expect(p.state.collections).toBe(1);
      // Idle: the first quiet interval trims.
      await jest.advanceTimersByTimeAsync(1000);
      expect(p.state.collections).toBe(2);
      // Still idle and small: no further collection.
      await jest.advanceTimersByTimeAsync(5000);
      expect(p.state.collections).toBe(2);
      // Grown while still counted idle (a little work at a time, a lazily loaded module): trimmed again.
      p.state.newSpace = 16 * MB;
      await jest.advanceTimersByTimeAsync(1000);
      expect(p.state.collections).toBe(3);
      // A burst grows the new space again; idle again, trimmed again.
      p.state.cpuMicros += 900_000;
      p.state.newSpace = 64 * MB;
      await jest.advanceTimersByTimeAsync(1000);
      expect(p.state.collections).toBe(3);
      await jest.advanceTimersByTimeAsync(1000);
      expect(p.state.collections).toBe(4);
      expect(await metrics.registry.getSingleMetricAsString('memory_trims_total')).toContain(
        'memory_trims_total{service="test"} 4',
      );
      trim.stop();
      p.state.newSpace = 64 * MB;
      await jest.advanceTimersByTimeAsync(5000);
      expect(p.state.collections).toBe(4);
    } finally {
      jest.useRealTimers();
    }
  });

  it('trims once per idle period even when a collection leaves the new space above the threshold', async () => {
    jest.useFakeTimers();
    try {
      const p = fakeProcess();
      // A collection that cannot shrink the new space (a --min-semi-space-size above the threshold).
      const collect = () => p.state.collections++;
      const trim = createMemoryTrim({ logger, everyMs: 1000, probe: p.probe, collect });
      trim.start();
      await jest.advanceTimersByTimeAsync(10_000);
      expect(p.state.collections).toBe(1);
      // Work, then idle: one more.
      p.state.cpuMicros += 900_000;
      await jest.advanceTimersByTimeAsync(10_000);
      expect(p.state.collections).toBe(2);
      trim.stop();
    } finally {
      jest.useRealTimers();
    }
  });

  it('leaves a new space that has not grown past the threshold alone', async () => {
    jest.useFakeTimers();
    try {
      const p = fakeProcess();
      p.state.newSpace = 4 * MB;
      const trim = createMemoryTrim({ logger, everyMs: 1000, probe: p.probe, collect: p.collect });
      trim.start();
      await jest.advanceTimersByTimeAsync(10_000);
      expect(p.state.collections).toBe(0);
      trim.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('collectAndShrink', () => {
  it("shrinks this process's new space, which a regular collection leaves as large as it grew", () => {
    const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;
    // Objects that survive a few scavenges make V8 grow the new space.
    let keep: object[] = [];
    for (let round = 0; round < 20 && newSpace() < 8 * MB; round++) {
      keep = [...keep, ...Array.from({ length: 100_000 }, (_, i) => ({ i, s: `v${i}` }))];
    }
    expect(newSpace()).toBeGreaterThanOrEqual(8 * MB);
    keep = [];
    collectAndShrink();
    expect(newSpace()).toBeLessThanOrEqual(2 * MB);
    expect(keep).toEqual([]);
    expect('gc' in globalThis).toBe(false);
  });
});
