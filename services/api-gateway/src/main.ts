// Wiring only: config → clients → the gateway (createGateway, which the tests start too) → start.
import { Redis } from 'ioredis';
import { loadConfig } from './config.ts';
import { createGateway } from './gateway.ts';

const config = loadConfig();
// Counters may be lost, requests may not wait: a Redis that does not answer within 250 ms is skipped.
// Auto-pipelining sends the rate-limit calls of requests handled in the same turn with one write.
const redis = new Redis(config.REDIS_URL, {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  lazyConnect: true,
  commandTimeout: 250,
  enableAutoPipelining: true,
});

await createGateway(config, { redis }).start();
