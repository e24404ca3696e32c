// Gives an idle service's young generation back to the system. V8 grows a process's new space (up to 64 MB
// on this size of heap) while the service loads its modules or serves a burst, and keeps those pages
// resident after the work is done: 25 to 55 MB of every idle service's memory. Capping the new space for good
// (--max-semi-space-size) costs throughput on the hot paths, where short-lived objects then spill into the old
// generation; trimming it only once the process is idle keeps the full young generation for the work and
// gives the memory back when there is none (docs/benchmarks.md, "Where the memory goes").
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from '../logger/logger.ts';
import { Counter, type Metrics } from '../http/metrics.ts';

/** What a trim check reads: the CPU time the process has used so far (µs) and its new space's size (bytes). */
export type MemoryProbe = { cpuMicros: () => number; newSpaceBytes: () => number };

/** V8's gc() as --expose-gc gives it, with the options this module uses. */
type Collect = (opts: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export type MemoryTrimOptions = {
  logger: Logger;
  metrics?: Metrics;
  /** How often the process's activity is checked (default 5 s). */
  everyMs?: number;
  /** The share of one core used since the last check below which the process counts as idle (default 2%). */
  idleShare?: number;
  /** A new space at least this large is trimmed (default 8 MB; a trimmed one is 1 MB). */
  minNewSpaceBytes?: number;
  /** For tests: the readings and the collection (default: this process's, and V8's last-resort GC). */
  probe?: MemoryProbe;
  collect?: () => void;
};

const processProbe: MemoryProbe = {
  cpuMicros: () => {
    const { user, system } = process.cpuUsage();
    return user + system;
  },
  newSpaceBytes: () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0,
};

let gc: Collect | undefined;

/**
 * V8's last-resort collection: full collections that also shrink the new space to its initial size (a
 * regular major GC leaves it as large as it grew). The `gc` function comes from a context made while
 * --expose-gc is set (the way Node's documentation of v8.setFlagsFromString shows), so no service starts with
 * the flag and no other context sees a global `gc`. About 100 ms on a service's heap, once per idle period.
 */
export function collectAndShrink(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as Collect;
    setFlagsFromString('--no-expose-gc');
  }
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/**
 * Trims the young generation (collectAndShrink) once when started (the service has just loaded its modules
 * and is up), then every `everyMs` when the process used less than `idleShare` of a core since the last check,
 * in both cases only when its new space has grown to `minNewSpaceBytes` or more. A process that keeps working
 * is not trimmed again; one that goes idle is trimmed once, within two checks.
 */
export function createMemoryTrim(opts: MemoryTrimOptions): { name: string; start: () => void; stop: () => void } {
  const everyMs = opts.everyMs ?? 5_000;
  const idleShare = opts.idleShare ?? 0.02;
  const minNewSpaceBytes = opts.minNewSpaceBytes ?? 8 * 1024 * 1024;
  const probe = opts.probe ?? processProbe;
  const collect = opts.collect ?? collectAndShrink;
  const trims = opts.metrics
    ? new Counter({
        name: 'memory_trims_total',
        help: "Times this idle process gave its young generation's memory back to the system",
        registers: [opts.metrics.registry],
      })
    : undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastCpu = 0;
  let lastAt = 0;
  // Cleared by a trim that could not bring the new space under the threshold (an operator's
  // --min-semi-space-size, say), and set again by a busy check: then one trim per idle period, not one a check.
  let armed = true;

  const check = (force = false) => {
    const cpu = probe.cpuMicros();
    const at = performance.now();
    const share = (cpu - lastCpu) / 1000 / (at - lastAt);
    lastCpu = cpu;
    lastAt = at;
    if (!force && share >= idleShare) {
      armed = true;
      return;
    }
    const before = probe.newSpaceBytes();
    if (!armed || before < minNewSpaceBytes) return;
    collect();
    const after = probe.newSpaceBytes();
    armed = after < minNewSpaceBytes;
    // The collection's own CPU time is not the process's work.
    lastCpu = probe.cpuMicros();
    lastAt = performance.now();
    trims?.inc();
    opts.logger.debug(
      { newSpaceBefore: before, newSpaceAfter: after, ms: Math.round(lastAt - at) },
      'idle: young generation trimmed',
    );
  };

  return {
    name: 'memory-trim',
    start() {
      if (timer) return;
      lastCpu = probe.cpuMicros();
      lastAt = performance.now();
      // Loading the modules grew the new space; what they left there is the service's idle state.
      check(true);
      timer = setInterval(check, everyMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
