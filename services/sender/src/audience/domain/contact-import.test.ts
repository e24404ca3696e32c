import { describe, expect, it } from '@jest/globals';
import {
  chunkCounts,
  foldRepeatedAddresses,
  readRow,
  resolveColumnMap,
  rowReader,
  type ImportedContact,
  type RowReader,
} from './contact-import.ts';
import type { PropertyDefinition } from './contacts.ts';

const PLAN: PropertyDefinition = {
  id: '0195f3a2-0000-7000-8000-00000000000a',
  key: 'plan',
  type: 'string',
  fallback_value: null,
};
const SEATS: PropertyDefinition = {
  id: '0195f3a2-0000-7000-8000-00000000000b',
  key: 'seats',
  type: 'number',
  fallback_value: null,
};
const EMAIL_PROPERTY: PropertyDefinition = {
  id: '0195f3a2-0000-7000-8000-00000000000c',
  key: 'email',
  type: 'string',
  fallback_value: null,
};
const DEFINITIONS = [PLAN, SEATS];

describe('resolveColumnMap', () => {
  it('matches fields by header name (any case, spaces or underscores) and properties by key', () => {
    const resolved = resolveColumnMap(
      ['Email', 'E-mail', 'First Name', 'last_name', 'Unsubscribed', 'Plan', 'seats', 'other'],
      undefined,
      DEFINITIONS,
    );
    expect(resolved).toEqual({
      ok: true,
      map: {
        email: 'Email',
        first_name: 'First Name',
        last_name: 'last_name',
        unsubscribed: 'Unsubscribed',
        [PLAN.id]: 'Plan',
        [SEATS.id]: 'seats',
      },
    });
  });

  it('lets column_map override by field and by property, and a field keeps its column from a property of its name', () => {
    const resolved = resolveColumnMap(
      ['email', 'Courriel', 'Prénom', 'Formule'],
      {
        fields: { email: 'Courriel', first_name: 'Prénom' },
        properties: { plan: { column: 'Formule', type: 'string' } },
      },
      [...DEFINITIONS, EMAIL_PROPERTY],
    );
    expect(resolved).toEqual({ ok: true, map: { email: 'Courriel', first_name: 'Prénom', [PLAN.id]: 'Formule' } });
  });

  it('refuses a column the header lacks, an unknown property, a property of another type, and no email column', () => {
    expect(resolveColumnMap(['email'], { fields: { first_name: 'First' }, properties: {} }, DEFINITIONS)).toEqual({
      ok: false,
      refusal: {
        name: 'validation_error',
        message: "The column `First` of `column_map.first_name` is not in the file's header.",
      },
    });
    expect(
      resolveColumnMap(['email', 'x'], { fields: {}, properties: { nope: { column: 'x' } } }, DEFINITIONS),
    ).toMatchObject({
      ok: false,
      refusal: { message: expect.stringContaining('`nope` does not exist') as unknown },
    });
    expect(
      resolveColumnMap(
        ['email', 'x'],
        { fields: {}, properties: { seats: { column: 'x', type: 'boolean' } } },
        DEFINITIONS,
      ),
    ).toMatchObject({
      ok: false,
      refusal: { message: 'The contact property `seats` is a number, not a boolean.' },
    });
    expect(resolveColumnMap(['mail', 'name'], undefined, DEFINITIONS)).toMatchObject({
      ok: false,
      refusal: { message: expect.stringContaining('no `email` column') as unknown },
    });
  });
});

describe('readRow', () => {
  const header = ['email', 'first', 'unsub', 'plan', 'seats'];
  const reader = (
    rowReader(
      header,
      { email: 'email', first_name: 'first', unsubscribed: 'unsub', [PLAN.id]: 'plan', [SEATS.id]: 'seats' },
      DEFINITIONS,
    ) as { ok: true; reader: RowReader }
  ).reader;

  it('reads a row: trimmed values, empty as none, numbers and unsubscribed parsed', () => {
    expect(readRow([' Ann@Example.COM ', ' Ann ', 'Yes', 'pro', ' 1.5e2 '], reader)).toEqual({
      ok: true,
      contact: {
        email: 'Ann@example.com',
        first_name: 'Ann',
        last_name: null,
        unsubscribed: true,
        properties: { [PLAN.id]: 'pro', [SEATS.id]: 150 },
      },
    });
    expect(readRow(['b@x.com', '', '0', '', ''], reader)).toEqual({
      ok: true,
      contact: { email: 'b@x.com', first_name: null, last_name: null, unsubscribed: false, properties: {} },
    });
    expect(readRow(['c@x.com'], reader)).toMatchObject({ ok: true, contact: { email: 'c@x.com', unsubscribed: null } });
  });

  it('fails a row for a bad email, a wrong-type value, a bad unsubscribed, too many values or a NUL', () => {
    expect(readRow(['', 'A'], reader)).toEqual({ ok: false, reason: 'Missing `email`.' });
    expect(readRow(['not-an-email', 'A'], reader)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('Invalid `email`') as unknown,
    });
    expect(readRow(['Ann <a@x.com>'], reader)).toMatchObject({ ok: false });
    expect(readRow(['a@x.com', '', '', '', 'ten'], reader)).toEqual({
      ok: false,
      reason: 'The contact property `seats` must be a number.',
    });
    expect(readRow(['a@x.com', '', '', '', '0x10'], reader)).toMatchObject({ ok: false });
    expect(readRow(['a@x.com', '', '', '', '1e999'], reader)).toMatchObject({ ok: false });
    expect(readRow(['a@x.com', '', 'maybe'], reader)).toEqual({
      ok: false,
      reason: 'Invalid `unsubscribed`: it must be true or false.',
    });
    expect(readRow(['a@x.com', 'Smith', ' John', '', '', ''], reader)).toEqual({
      ok: false,
      reason: 'The row has 6 values but the header has 5 columns.',
    });
    expect(readRow(['a@x.com', 'A\u0000'], reader)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('NUL') as unknown,
    });
  });

  it('leaves out a property deleted since the import was made', () => {
    const withoutSeats = (
      rowReader(header, { email: 'email', [SEATS.id]: 'seats' }, [PLAN]) as { ok: true; reader: RowReader }
    ).reader;
    expect(withoutSeats.properties).toEqual([]);
    expect(rowReader(['mail'], { email: 'email' }, [])).toEqual({
      ok: false,
      reason: 'The file has no `email` column.',
    });
  });
});

describe('foldRepeatedAddresses and chunkCounts', () => {
  const row = (
    email: string,
    first_name: string | null,
    properties: ImportedContact['properties'] = {},
  ): ImportedContact => ({
    email,
    first_name,
    last_name: null,
    unsubscribed: null,
    properties,
  });
  const rows = [
    row('a@x.com', 'First', { p: 1 }),
    row('b@x.com', 'B'),
    row('A@X.com', null, { q: 2 }),
    row('a@x.com', 'Third'),
  ];

  it('under upsert, folds later rows of an address over the earlier one', () => {
    expect(foldRepeatedAddresses(rows, 'upsert')).toEqual({
      contacts: [row('a@x.com', 'Third', { p: 1, q: 2 }), row('b@x.com', 'B')],
      repeats: 2,
    });
  });

  it('under skip, keeps the first row of an address', () => {
    expect(foldRepeatedAddresses(rows, 'skip')).toEqual({
      contacts: [row('a@x.com', 'First', { p: 1 }), row('b@x.com', 'B')],
      repeats: 2,
    });
  });

  it('counts each row once: repeats are updates under upsert and skipped under skip', () => {
    // 5 rows: 1 failed, 4 good of 2 addresses (2 repeats); one address new, the other existing.
    expect(
      chunkCounts({ rows: 5, failed: 1, contacts: 2, repeats: 2, created: 1, updated: 1, onConflict: 'upsert' }),
    ).toEqual({
      total: 5,
      created: 1,
      updated: 3,
      skipped: 0,
      failed: 1,
    });
    expect(
      chunkCounts({ rows: 5, failed: 1, contacts: 2, repeats: 2, created: 1, updated: 0, onConflict: 'skip' }),
    ).toEqual({
      total: 5,
      created: 1,
      updated: 0,
      skipped: 3,
      failed: 1,
    });
  });
});
