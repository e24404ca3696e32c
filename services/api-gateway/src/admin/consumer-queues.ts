import type { ServiceName } from '@postline/contracts';

/**
 * Every broker consumer of the system, as its service names it in `createConsumer` (`service`, `name`):
 * its work queue is `${BROKER_PREFIX}.${service}.${consumer}` and its dead letters wait in that name +
 * `.dead`. RabbitMQ cannot list queues over AMQP, so `dead-letters list` reads this list; a test compares
 * it with the queues the running services report on /metrics, so a consumer added without its line here
 * fails that test.
 */
export const CONSUMER_QUEUES: readonly {
  service: ServiceName;
  consumer: string;
  /** Run only when configured (the gateway's, with the dashboard's emails): listed only once declared. */
  optional?: true;
}[] = [
  { service: 'sender', consumer: 'deliver' },
  { service: 'sender', consumer: 'send-scheduled' },
  { service: 'sender', consumer: 'expire-suppression' },
  { service: 'sender', consumer: 'feedback' },
  { service: 'sender', consumer: 'domain-state' },
  { service: 'sender', consumer: 'fan-out-broadcast' },
  { service: 'sender', consumer: 'send-broadcast' },
  { service: 'sender', consumer: 'import-contacts' },
  { service: 'sender', consumer: 'unsubscribe-mail' },
  { service: 'webhook-dispatcher', consumer: 'public-events' },
  { service: 'webhook-dispatcher', consumer: 'deliver' },
  { service: 'domain-verifier', consumer: 'check-domain' },
  { service: 'scheduler', consumer: 'timer-commands' },
  { service: 'inbound-smtp', consumer: 'domain-state' },
  { service: 'api-gateway', consumer: 'admin-notices', optional: true },
];
