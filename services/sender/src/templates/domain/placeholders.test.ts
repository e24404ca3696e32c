import { describe, expect, it } from '@jest/globals';
import { placeholdersOf, renderPlaceholders } from './placeholders.ts';

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
