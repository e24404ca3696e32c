import { listenChannel, type ChannelListener, type Logger } from '@postline/platform';
import { keyChangeChannel } from '../db/api-keys.ts';
import type { KeyCache } from '../db/key-cache.ts';

/** Keeps the caches trusted only while the LISTEN on the key-change channel is in place, emptying them on each change. */
export function watchKeyChanges(opts: {
  databaseUrl: string;
  schema: string;
  logger: Logger;
  caches: Pick<KeyCache<unknown>, 'invalidate' | 'setTrusted'>[];
}): ChannelListener {
  return listenChannel({
    databaseUrl: opts.databaseUrl,
    channel: keyChangeChannel(opts.schema),
    logger: opts.logger,
    applicationName: 'api-gateway-key-changes',
    onNotification: () => opts.caches.forEach((cache) => cache.invalidate()),
    onListening: () => opts.caches.forEach((cache) => cache.setTrusted(true)),
    onLost: () => opts.caches.forEach((cache) => cache.setTrusted(false)),
  });
}
