import { describe, expect, it } from '@jest/globals';
import {
  applyContactChange,
  checkNewProperty,
  checkPropertyChange,
  checkPropertyValues,
  contactKey,
  distinctChoices,
  distinctIds,
  type ContactFields,
  type PropertyDefinition,
} from './contacts.ts';
import { checkDefaultSubscription } from './topics.ts';

const ID = '0192f1c4-7a3b-7c2d-8e4f-5a6b7c8d9e0f';
const DEFINITIONS: PropertyDefinition[] = [
  { id: 'p-plan', key: 'plan', type: 'string', fallback_value: null },
  { id: 'p-seats', key: 'seats', type: 'number', fallback_value: 1 },
];
const CONTACT: ContactFields = {
  email: 'ann@example.com',
  first_name: 'Ann',
  last_name: null,
  unsubscribed: false,
  properties: { 'p-plan': 'pro' },
};

describe('contactKey', () => {
  it('reads a UUID as an id (lower case) and anything else as an email, kept as given', () => {
    expect(contactKey(ID.toUpperCase())).toEqual({ id: ID });
    expect(contactKey(' a+b@Example.com ')).toEqual({ email: 'a+b@Example.com' });
    expect(contactKey('not-an-id')).toEqual({ email: 'not-an-id' });
  });
});

describe('checkPropertyValues', () => {
  it('keys values by property id and refuses an unknown key or a wrong type naming the key', () => {
    expect(checkPropertyValues({ plan: 'team', seats: 3 }, DEFINITIONS)).toEqual({
      ok: true,
      values: { 'p-plan': 'team', 'p-seats': 3 },
    });
    const unknown = checkPropertyValues({ colour: 'red' }, DEFINITIONS);
    expect(unknown.ok ? '' : unknown.refusal.message).toContain('`colour`');
    const wrongType = checkPropertyValues({ seats: '3' }, DEFINITIONS);
    expect(wrongType).toEqual({
      ok: false,
      refusal: { name: 'validation_error', message: 'The contact property `seats` must be a number.' },
    });
    expect(checkPropertyValues({ seats: Number.NaN }, DEFINITIONS).ok).toBe(false);
  });
});

describe('applyContactChange', () => {
  it('keeps absent fields, clears with null, and merges property values (null removes one)', () => {
    const { changed, next } = applyContactChange(CONTACT, {
      first_name: null,
      properties: { 'p-plan': null, 'p-seats': 2 },
    });
    expect(changed).toBe(true);
    expect(next).toEqual({ ...CONTACT, first_name: null, properties: { 'p-seats': 2 } });
  });

  it('reports no change when every given value is the current one', () => {
    expect(
      applyContactChange(CONTACT, { first_name: 'Ann', unsubscribed: false, properties: { 'p-plan': 'pro' } }).changed,
    ).toBe(false);
    expect(applyContactChange(CONTACT, {}).changed).toBe(false);
    expect(applyContactChange(CONTACT, { email: 'Ann@example.com' }).changed).toBe(true);
  });
});

describe('distinct ids and choices', () => {
  it('keeps each id once, lower case, in first-given order', () => {
    expect(distinctIds(['B', 'a', 'b'])).toEqual(['b', 'a']);
  });

  it('keeps each topic once with the last choice given for it', () => {
    expect(
      distinctChoices([
        { id: 'T1', subscription: 'opt_in' },
        { id: 't2', subscription: 'opt_in' },
        { id: 't1', subscription: 'opt_out' },
      ]),
    ).toEqual([
      { id: 't2', subscription: 'opt_in' },
      { id: 't1', subscription: 'opt_out' },
    ]);
  });
});

describe('property definitions', () => {
  it('checks a new key and a fallback of the property type', () => {
    expect(checkNewProperty({ key: 'plan_2', type: 'string', fallback_value: 'free' })).toEqual({
      ok: true,
      fallback: 'free',
    });
    expect(checkNewProperty({ key: 'seats', type: 'number' })).toEqual({ ok: true, fallback: null });
    expect(checkNewProperty({ key: 'has-dash', type: 'string' }).ok).toBe(false);
    expect(checkNewProperty({ key: 'x'.repeat(51), type: 'string' }).ok).toBe(false);
    expect(checkNewProperty({ key: 'seats', type: 'number', fallback_value: '1' })).toEqual({
      ok: false,
      refusal: { name: 'validation_error', message: 'The `fallback_value` must be a number.' },
    });
  });

  it("changes only the fallback; the key and type given back must be the property's own", () => {
    const current = { key: 'seats', type: 'number' as const };
    expect(checkPropertyChange(current, { key: 'seats', type: 'number', fallback_value: 5 })).toEqual({
      ok: true,
      fallback: 5,
    });
    expect(checkPropertyChange(current, {})).toEqual({ ok: true, fallback: undefined });
    expect(checkPropertyChange(current, { fallback_value: null })).toEqual({ ok: true, fallback: null });
    expect(checkPropertyChange(current, { type: 'string' }).ok).toBe(false);
    expect(checkPropertyChange(current, { key: 'Seats' }).ok).toBe(false);
    expect(checkPropertyChange(current, { fallback_value: 'five' }).ok).toBe(false);
  });
});

describe('checkDefaultSubscription', () => {
  it("tolerates the topic's own default sent back and refuses another", () => {
    expect(checkDefaultSubscription('opt_in', undefined)).toBeUndefined();
    expect(checkDefaultSubscription('opt_in', 'opt_in')).toBeUndefined();
    expect(checkDefaultSubscription('opt_in', 'opt_out')?.name).toBe('validation_error');
  });
});
