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
