import { listenChannel, type ChannelListener, type Logger } from '@postline/platform';
import { keyChangeChannel } from '../db/api-keys.ts';
import type { KeyCache } from '../db/key-cache.ts';

/** Keeps `cache` trusted only while the LISTEN on the key-change channel is in place, emptying it on each change. */
export function watchKeyChanges(opts: { databaseUrl: string; schema: string; logger: Logger; cache: KeyCache }): ChannelListener {
  return listenChannel({
    databaseUrl: opts.databaseUrl,
    channel: keyChangeChannel(opts.schema),
    logger: opts.logger,
    applicationName: 'api-gateway-key-changes',
    onNotification: () => opts.cache.invalidate(),
    onListening: () => opts.cache.setTrusted(true),
    onLost: () => opts.cache.setTrusted(false),
  });
}
