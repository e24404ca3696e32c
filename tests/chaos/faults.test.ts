// The chaos suite (tests/chaos/chaos.ts): a mixed stream of mail through the six services as separate
// processes while each fault strikes in turn. `npm test` runs the short variant (a lighter stream, shorter
// cuts and pauses); `npm run chaos` runs the full one (CHAOS=full) and prints the report that docs/operations.md quotes.
import { describe, expect, it } from '@jest/globals';
import { ALL_FAULTS, describeReport, runChaos, type ChaosOptions } from './chaos.ts';

// The full run is made by hand on a quiet machine; the short one beside the rest of `npm test`, on a machine
// whose cores the other files keep busy, where an answer can wait on a starved process (a service starting
// again among five others) for many seconds without anything hanging.
const FULL: ChaosOptions = { rate: 40, cutMs: 15_000, settleMs: 10_000, answerTimeoutMs: 15_000 };
const SHORT: ChaosOptions = { rate: 15, cutMs: 3_000, settleMs: 1_500, answerTimeoutMs: 30_000 };
const full = process.env.CHAOS === 'full';

describe('the chaos suite', () => {
  it(
    'loses nothing and hangs no request through kills, SIGTERMs, dependency cuts and a whole-system restart',
    async () => {
      const report = await runChaos(full ? FULL : SHORT);
      process.stderr.write(`\n[chaos] ${full ? 'full' : 'short'} run\n${describeReport(report)}\n`);
      if (report.mxDuplicates.length + report.webhookDuplicates.length > 0) {
        process.stderr.write(
          `[chaos] duplicates: ${JSON.stringify({ mx: report.mxDuplicates, webhooks: report.webhookDuplicates })}\n`,
        );
      }

      expect(report.unexpectedExits).toEqual([]);
      expect(report.refused).toEqual([]);
      expect(report.abandoned).toBe(0);
      expect(report.accepted).toBeGreaterThan(0);
      // Nothing lost, nothing stuck.
      expect(report.notFinal).toEqual([]);
      expect(report.notDelivered).toEqual([]);
      expect(report.eventsMissing).toEqual([]);
      expect(report.queuesNotEmpty).toEqual([]);
      // No request hangs: every try was answered before the client gave up on it. How soon is a performance
      // target, not a behaviour: the full run holds every answer to 10 s; the short one prints its figure.
      const bound = full ? 10_000 : SHORT.answerTimeoutMs;
      expect({ slowest: report.slowest, answered: report.slowest.ms < bound }).toMatchObject({ answered: true });
      // And no client waits long after a fault is over: counted per request, with its retries, from every
      // service being ready again (the killed process back) to its final answer. A key left in flight by a
      // killed process is released at once or taken over within its lease, so a retry never meets 409s for
      // long. The same bounds: 10 s in the full run, the client's wait for one answer in the short one.
      expect({ recovery: report.slowestRecovery, soon: report.slowestRecovery.ms <= bound }).toMatchObject({
        soon: true,
      });
      expect(report.faults.map((fault) => fault.name)).toEqual(ALL_FAULTS);
      if (full)
        for (const fault of report.faults)
          expect({ fault: fault.name, ready: fault.readyAfterMs <= 5_000 }).toEqual({ fault: fault.name, ready: true });
      // One email per request, whatever its client's retries.
      expect(report.acceptedTwice).toEqual([]);
      // An event is emitted once, whatever is redelivered.
      expect(report.doubleEvents).toEqual([]);
      // The MX gets a transaction again only for an attempt whose sender died during it (retaken).
      expect(report.mxExtraTransactions).toBeLessThanOrEqual(report.retakenDeliveries);
    },
    full ? 1_800_000 : 400_000,
  );
});
