import { describe, expect, it } from '@jest/globals';
import { placeholdersOf, renderPlaceholders, renderTemplate, fillDeclaredVariables } from './placeholders.ts';

describe('renderPlaceholders', () => {
  const values: Record<string, string | number> = { NAME: 'Ada <3', COUNT: 3, 'contact.first_name': 'Grace' };
  const valueOf = (key: string) => values[key];

  it('replaces values, escaping them in html only, and uses a fallback where a value is missing', () => {
    const text = 'Hi {{{NAME}}}, {{{ COUNT }}} items, {{{contact.first_name|there}}} / {{{contact.last_name|friend}}}';
    expect(renderPlaceholders(text, valueOf, { html: true })).toEqual({
      text: 'Hi Ada &lt;3, 3 items, Grace / friend',
      missing: [],
    });
    expect(renderPlaceholders(text, valueOf, { html: false }).text).toBe('Hi Ada <3, 3 items, Grace / friend');
  });

  it('lists each key with neither a value nor a fallback once, and leaves other braces alone', () => {
    const rendered = renderPlaceholders('{{{A}}}{{{A}}}{{{B|}}} {{not}} {{{bad key}}}', valueOf, { html: true });
    expect(rendered).toEqual({ text: ' {{not}} {{{bad key}}}', missing: ['A'] });
  });

  it('finds the placeholders of a text with their fallbacks', () => {
    expect(placeholdersOf('{{{A}}} {{{b.c|x y}}}')).toEqual([
      { key: 'A', fallback: undefined },
      { key: 'b.c', fallback: 'x y' },
    ]);
  });
});

describe('renderTemplate', () => {
  const declared = [
    { key: 'NAME', fallback_value: 'friend' },
    { key: 'COUNT', fallback_value: null },
  ];
  const parts = { html: '<p>{{{NAME}}}: {{{COUNT|no}}} {{{CODE}}}</p>', text: '{{{NAME}}}', subject: 'For {{{NAME}}}' };

  it('takes the given value, else the declared fallback, else the placeholder’s own, escaping in html only', () => {
    expect(renderTemplate(parts, declared, { NAME: 'A & B', CODE: 7 })).toEqual({
      html: '<p>A &amp; B: no 7</p>',
      text: 'A & B',
      subject: 'For A & B',
      missing: [],
    });
    expect(renderTemplate(parts, declared, { CODE: 'x' })).toMatchObject({ html: '<p>friend: no x</p>', missing: [] });
  });

  it('names a key without any value as missing, but not one given as an empty value', () => {
    expect(renderTemplate(parts, declared, {}).missing).toEqual(['CODE']);
    expect(renderTemplate(parts, declared, { CODE: '' })).toMatchObject({ html: '<p>friend: no </p>', missing: [] });
    expect(renderTemplate({ html: 'x', text: null, subject: null }, declared, {})).toEqual({
      html: 'x',
      text: null,
      subject: null,
      missing: [],
    });
  });
});

describe('fillDeclaredVariables', () => {
  const declared = [
    { key: 'PRODUCT', fallback_value: 'Tea & cake' },
    { key: 'SEATS', fallback_value: 3 },
    { key: 'NOTE', fallback_value: null },
  ];

  it("fills only the declared variables, with their fallbacks, and leaves the contact's placeholders", () => {
    expect(
      fillDeclaredVariables(
        '{{{PRODUCT}}} x{{{SEATS}}} for {{{contact.first_name|you}}} {{{RESEND_UNSUBSCRIBE_URL}}}',
        declared,
        { html: false },
      ),
    ).toBe('Tea & cake x3 for {{{contact.first_name|you}}} {{{RESEND_UNSUBSCRIBE_URL}}}');
  });

  it("escapes a fallback in HTML, and takes the placeholder's own fallback, else nothing, without one", () => {
    expect(fillDeclaredVariables('<b>{{{PRODUCT}}}</b>', declared, { html: true })).toBe('<b>Tea &amp; cake</b>');
    expect(fillDeclaredVariables('[{{{NOTE|none}}}] [{{{NOTE}}}]', declared, { html: true })).toBe('[none] []');
  });
});
