// The order jest hands files to its two workers. Jest's own order (the last run's failures, then the longest
// files by the last run's durations, or by size on a fresh clone) puts the heaviest files first, side by side:
// the chaos run and the restarts run would load the same two cores at once, each with a private system
// under a stream of mail. Here those heavy files are spread through the first half of the files (the longer half of the run), with
// jest's order kept for the rest, so each runs beside ordinary files and none is left for the end.
import { relative } from 'node:path';
import Sequencer from '@jest/test-sequencer';

/**
 * The files that start a private system and load it for a minute or more, longest first. Each keeps the
 * whole machine busy while it runs.
 */
export const HEAVY_FILES = [
  'tests/e2e/restarts.test.ts',
  'tests/chaos/faults.test.ts',
  'tests/chaos/dead-letters.test.ts',
  'tests/chaos/dependency-outages.test.ts',
  'tests/fuzz/api.test.ts',
  'tests/e2e/replicas.test.ts',
];

/**
 * The files on the development inbox's shared system (`DEV_INBOX=true`): one more system of six services,
 * whose database connections the replicas run (twelve services of its own) leaves no room for within
 * Postgres's 100. They run last, long after every heavy file has ended.
 */
export const LAST_FILES = ['services/sender/test/dev-inbox.int.test.ts', 'tests/dashboard/dev-inbox.test.ts'];

/** Where in the run the last heavy file starts, as a share of the ordinary files before it. */
const HEAVY_SPAN = 1 / 2;

export default class SpreadSequencer extends Sequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    const path = (test) => relative(test.context.config.rootDir, test.path);
    const last = sorted.filter((test) => LAST_FILES.includes(path(test)));
    const ordered = sorted.filter((test) => !LAST_FILES.includes(path(test)));
    const rank = (test) => HEAVY_FILES.indexOf(path(test));
    const heavy = ordered.filter((test) => rank(test) >= 0).sort((a, b) => rank(a) - rank(b));
    const rest = ordered.filter((test) => rank(test) < 0);
    if (heavy.length < 2) return [...ordered, ...last];
    const gap = (rest.length * HEAVY_SPAN) / (heavy.length - 1);
    const spread = [...rest];
    // From the last, so that the positions computed for the earlier ones still hold.
    for (let i = heavy.length - 1; i >= 0; i--) spread.splice(Math.round(i * gap), 0, heavy[i]);
    return [...spread, ...last];
  }
}
