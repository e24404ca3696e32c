import { Counter, Gauge, Histogram, type Metrics } from '@postline/platform';

export type DomainVerifierMetrics = {
  checks: Counter<'trigger' | 'status'>;
  lookupDuration: Histogram<'type' | 'outcome'>;
};

/**
 * The domain-verifier's own metrics on the service registry. `domains` is read from the database at
 * scrape time, so every replica reports the same, global numbers (aggregate with max, not sum); the
 * counter and the histogram are per replica (sum them).
 */
export function createDomainVerifierMetrics(
  registry: Metrics['registry'],
  countDomainsPerStatus: () => Promise<{ status: string; n: number }[]>,
): DomainVerifierMetrics {
  const registers = [registry];
  const metrics: DomainVerifierMetrics = {
    checks: new Counter({
      name: 'domain_checks_total',
      help: 'Domain verification checks by trigger and resulting domain status',
      labelNames: ['trigger', 'status'] as const,
      registers,
    }),
    lookupDuration: new Histogram({
      name: 'domain_dns_lookup_duration_seconds',
      help: 'DNS lookups of customer records by record type and outcome',
      labelNames: ['type', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
  new Gauge({
    name: 'domains',
    help: 'Domains by verification status',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      const rows = await countDomainsPerStatus();
      this.reset();
      for (const row of rows) this.set({ status: row.status }, row.n);
    },
  });
  return metrics;
}
