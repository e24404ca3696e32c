/** The six services, as the runtime contract names them (SERVICE in the image, schema owners, log names). */
export const SERVICE_NAMES = [
  'api-gateway',
  'sender',
  'inbound-smtp',
  'webhook-dispatcher',
  'scheduler',
  'domain-verifier',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * The Node options every service process starts with (`npm start`, the image's entrypoint, the test
 * systems), before its main.ts. A young generation (V8's new space) of at most 4 MB a half instead of
 * V8's 16 to 32 MB: each process fills its new space while it loads its modules and keeps the pages after,
 * so the default left every idle service holding 20 to 40 MB more than this, and the delivery and accept
 * benchmarks measure no difference (docs/benchmarks.md, "Where the memory goes").
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=4'] as const;
