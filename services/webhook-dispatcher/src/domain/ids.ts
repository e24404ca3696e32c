import { newId } from '@postline/platform';

/** `msg_` + UUIDv7 hex: Svix-style, and time-ordered as text (keyset pagination). */
export function newEventId(): string {
  return `msg_${newId().replaceAll('-', '')}`;
}

export function newAttemptId(): string {
  return `atmpt_${newId().replaceAll('-', '')}`;
}

export function isEventId(id: string): boolean {
  return /^msg_[0-9a-f]{32}$/.test(id);
}
