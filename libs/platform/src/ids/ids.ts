import { parse, stringify, v7 as uuidv7, validate, version } from 'uuid';

/** A new UUIDv7: time-ordered, so ids sort by creation and lists page by id. */
export function newId(): string {
  return uuidv7();
}

/** True for a syntactically valid UUID of any version (ids from other systems are v4). */
export function isUuid(value: string): boolean {
  return validate(value);
}

/** The creation time carried in a UUIDv7's first 48 bits; undefined for other versions. */
export function uuidv7Time(id: string): Date | undefined {
  if (!validate(id) || version(id) !== 7) return undefined;
  const ms = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
  return new Date(ms);
}

/** A UUID's 16 bytes, for compact encodings (signed links). Throws on a string that is not a UUID. */
export function uuidToBytes(id: string): Buffer {
  return Buffer.from(parse(id));
}

/** The UUID whose 16 bytes these are, in its usual text form. Throws when they are not a valid UUID. */
export function uuidFromBytes(bytes: Uint8Array): string {
  return stringify(bytes);
}
