import { hash } from 'node:crypto';
import { newId } from '@postline/platform/pure';

/**
 * The id of the record of one public event for one endpoint, and so the `webhook-id` of all its
 * deliveries: `msg_` + 32 hex in UUIDv7's layout, the event's time (ms) in its first 48 bits and a hash of
 * endpoint and event in the rest. The same for every copy of the event, so a first attempt made again
 * after a crash (before its record was written) carries the id of the first, and receivers can tell it is
 * one event. Time-ordered as text (keyset pagination, newest first).
 */
export function eventIdFor(endpointId: string, sourceEventId: string, occurredAt: Date): string {
  // The one-shot hash() costs less than a Hash object, and this runs for every record of every event.
  const digest = hash('sha256', `${endpointId}:${sourceEventId.toLowerCase()}`, 'buffer');
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(Math.max(0, occurredAt.getTime()), 0, 6);
  digest.copy(bytes, 6, 0, 10);
  bytes[6] = 0x70 | (bytes[6]! & 0x0f);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  return `msg_${bytes.toString('hex')}`;
}

export function newAttemptId(): string {
  return `atmpt_${newId().replaceAll('-', '')}`;
}

export function isEventId(id: string): boolean {
  return /^msg_[0-9a-f]{32}$/.test(id);
}
