import { Counter, type Metrics } from '@postline/platform';

export type GatewayMetrics = {
  /** Requests answered 401, 403 or 429 by the gateway itself, by error name. */
  rejected: Counter<'name'>;
};

/** The gateway's own metrics on the service registry (per replica: sum them). */
export function createGatewayMetrics(registry: Metrics['registry']): GatewayMetrics {
  return {
    rejected: new Counter({
      name: 'gateway_rejected_requests_total',
      help: 'Requests refused by the gateway before reaching an owner, by error name',
      labelNames: ['name'] as const,
      registers: [registry],
    }),
  };
}
