import { PROPERTY_KEY, type PropertyType, type Subscription } from '@postline/contracts';
import { isUuid } from '@postline/platform/pure';
import { parseMailbox, type Refusal } from '../../message/index.ts';

// The rules of a contact's fields and property values, shared by the contact routes and CSV imports.

export type PropertyValue = string | number | null;

/** A team's contact property as the rules need it. */
export type PropertyDefinition = { id: string; key: string; type: PropertyType; fallback_value: PropertyValue };

export { PROPERTY_KEY };

/**
 * A contact's email as stored: a bare address (`a@b.com`, not `Name <a@b.com>`), its domain lowercased as
 * everywhere else; undefined when it is not one. Contacts are unique per team by its lowercase form.
 */
export function contactEmail(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed.includes('<')) return undefined;
  return parseMailbox(trimmed)?.address;
}

export type CheckedProperties = { ok: true; values: Record<string, PropertyValue> } | { ok: false; refusal: Refusal };

/**
 * Checks `input` (`{key: value}`) against the team's property definitions and returns the values keyed by
 * property id, as stored. An unknown key or a value of the wrong type is refused naming the key; `null`
 * clears a value. Numbers must be finite.
 */
export function checkPropertyValues(input: unknown, definitions: readonly PropertyDefinition[]): CheckedProperties {
  if (input === undefined || input === null) return { ok: true, values: {} };
  if (typeof input !== 'object' || Array.isArray(input)) {
    return { ok: false, refusal: { name: 'validation_error', message: 'The `properties` field must be an object.' } };
  }
  const byKey = new Map(definitions.map((definition) => [definition.key, definition]));
  const values: Record<string, PropertyValue> = {};
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    const definition = byKey.get(key);
    if (!definition) return { ok: false, refusal: unknownProperty(key) };
    const checked = checkValue(value, definition);
    if (!checked.ok) return checked;
    values[definition.id] = checked.value;
  }
  return { ok: true, values };
}

/** The refusal of a property key the team has not created. */
export function unknownProperty(key: string): Refusal {
  return {
    name: 'validation_error',
    message: `The contact property \`${key}\` does not exist. Create it on the /contact-properties API first.`,
  };
}

/** One value against its property's type (`null` always passes: it clears the value). */
export function checkValue(
  value: unknown,
  definition: PropertyDefinition,
): { ok: true; value: PropertyValue } | { ok: false; refusal: Refusal } {
  if (hasType(value, definition.type)) return { ok: true, value };
  return {
    ok: false,
    refusal: {
      name: 'validation_error',
      message: `The contact property \`${definition.key}\` must be a ${definition.type}.`,
    },
  };
}

/**
 * The reference's `properties` of a contact: `{key: {value, type}}` for each property the contact has a
 * value for, by the team's current definitions (values of deleted properties are left out).
 */
export function publicProperties(
  stored: Record<string, PropertyValue>,
  definitions: readonly PropertyDefinition[],
): Record<string, { value: PropertyValue; type: PropertyType }> {
  const out: Record<string, { value: PropertyValue; type: PropertyType }> = {};
  for (const definition of definitions) {
    if (Object.hasOwn(stored, definition.id) && stored[definition.id] !== null) {
      out[definition.key] = { value: stored[definition.id]!, type: definition.type };
    }
  }
  return out;
}

/** A contact's effective subscription to a topic: its explicit choice, else the topic's default. */
export function effectiveSubscription(explicit: Subscription | undefined, topicDefault: Subscription): Subscription {
  return explicit ?? topicDefault;
}

/**
 * How a path names a contact: a UUID is its id, anything else its email address (compared without case,
 * through `email_key`). SDKs send an address raw in the path (`/contacts/a+b@x.com`).
 */
export type ContactKey = { id: string } | { email: string };

export function contactKey(value: string): ContactKey {
  const trimmed = value.trim();
  return isUuid(trimmed) ? { id: trimmed.toLowerCase() } : { email: trimmed };
}

/** The fields of a contact a change may touch; `properties` keyed by property id, as stored. */
export type ContactFields = {
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  properties: Record<string, PropertyValue>;
};

/** A change to a contact: absent fields stay; property values keyed by property id, `null` clears one. */
export type ContactChange = Partial<Omit<ContactFields, 'properties'>> & { properties?: Record<string, PropertyValue> };

/** The contact after `change`, and whether anything differs (no write and no contact.updated otherwise). */
export function applyContactChange(
  current: ContactFields,
  change: ContactChange,
): { changed: boolean; next: ContactFields } {
  const properties = { ...current.properties };
  for (const [id, value] of Object.entries(change.properties ?? {})) {
    if (value === null) delete properties[id];
    else properties[id] = value;
  }
  const next: ContactFields = {
    email: change.email ?? current.email,
    first_name: change.first_name === undefined ? current.first_name : change.first_name,
    last_name: change.last_name === undefined ? current.last_name : change.last_name,
    unsubscribed: change.unsubscribed ?? current.unsubscribed,
    properties,
  };
  const changed =
    next.email !== current.email ||
    next.first_name !== current.first_name ||
    next.last_name !== current.last_name ||
    next.unsubscribed !== current.unsubscribed ||
    !samePropertyValues(next.properties, current.properties);
  return { changed, next };
}

function samePropertyValues(a: Record<string, PropertyValue>, b: Record<string, PropertyValue>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && b[key] === a[key]);
}

/** Ids as given in a body, each once, lower case (ids compare without case), in first-given order. */
export function distinctIds(ids: readonly string[]): string[] {
  return [...new Set(ids.map((id) => id.trim().toLowerCase()))];
}

export type SubscriptionChoice = { id: string; subscription: Subscription };

/** Topic choices each once (the last choice for a topic given twice wins), ids lower case. */
export function distinctChoices(choices: readonly SubscriptionChoice[]): SubscriptionChoice[] {
  const byId = new Map<string, Subscription>();
  for (const choice of choices) {
    const id = choice.id.trim().toLowerCase();
    byId.delete(id);
    byId.set(id, choice.subscription);
  }
  return [...byId].map(([id, subscription]) => ({ id, subscription }));
}

/** A new property's definition as given: the key's shape, and a fallback value of the property's type. */
export function checkNewProperty(input: {
  key: string;
  type: PropertyType;
  fallback_value?: PropertyValue | undefined;
}): { ok: true; fallback: PropertyValue } | { ok: false; refusal: Refusal } {
  if (!PROPERTY_KEY.test(input.key)) {
    return {
      ok: false,
      refusal: { name: 'validation_error', message: 'The `key` must be 1 to 50 letters, digits or underscores.' },
    };
  }
  return checkFallback(input.fallback_value ?? null, input.type);
}

/**
 * A change to a property: only its fallback value may change; a `key` or `type` given is tolerated when it
 * is the property's own (clients send the whole record back) and refused otherwise.
 */
export function checkPropertyChange(
  current: { key: string; type: PropertyType },
  input: { key?: string | undefined; type?: PropertyType | undefined; fallback_value?: PropertyValue | undefined },
): { ok: true; fallback: PropertyValue | undefined } | { ok: false; refusal: Refusal } {
  if (input.key !== undefined && input.key !== current.key) {
    return {
      ok: false,
      refusal: { name: 'validation_error', message: 'The `key` of a contact property cannot be changed.' },
    };
  }
  if (input.type !== undefined && input.type !== current.type) {
    return {
      ok: false,
      refusal: { name: 'validation_error', message: 'The `type` of a contact property cannot be changed.' },
    };
  }
  if (input.fallback_value === undefined) return { ok: true, fallback: undefined };
  return checkFallback(input.fallback_value, current.type);
}

function checkFallback(
  value: PropertyValue,
  type: PropertyType,
): { ok: true; fallback: PropertyValue } | { ok: false; refusal: Refusal } {
  if (hasType(value, type)) return { ok: true, fallback: value };
  return { ok: false, refusal: { name: 'validation_error', message: `The \`fallback_value\` must be a ${type}.` } };
}

/** `null`, or a value of the type: a finite number, or a string. */
function hasType(value: unknown, type: PropertyType): value is PropertyValue {
  return (
    value === null ||
    (type === 'number' ? typeof value === 'number' && Number.isFinite(value) : typeof value === 'string')
  );
}
