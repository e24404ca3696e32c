import { describe, expect, it } from '@jest/globals';
import { checkTemplateFields, renderTemplateSend, versionVariables, type TemplateContent } from './templates.ts';

const now = new Date('2026-11-25T10:00:00Z');
const content: TemplateContent = {
  from: 'Acme <a@example.com>',
  subject: 'For {{{NAME}}}',
  replyTo: null,
  html: '<p>{{{NAME}}} {{{COUNT}}}</p>',
  text: '{{{NAME}}} {{{COUNT}}}',
  variables: versionVariables(
    [
      { key: 'NAME', type: 'string', fallback_value: null },
      { key: 'COUNT', type: 'number', fallback_value: 2 },
    ],
    [],
    now,
  ),
};

describe('checkTemplateFields', () => {
  it('names every reserved key, compared case-sensitively', () => {
    const refusal = checkTemplateFields({
      variables: [
        { key: 'EMAIL', type: 'string', fallback_value: null },
        { key: 'this', type: 'string', fallback_value: null },
        { key: 'email', type: 'string', fallback_value: null },
      ],
    });
    expect(refusal?.message).toContain('`EMAIL`, `this` are reserved keys');
    expect(refusal?.message).not.toContain('`email`');
  });

  it('refuses more than 50 variables, a duplicate key, a mistyped fallback and a UUID-shaped alias', () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ key: `K${i}`, type: 'string', fallback_value: null }));
    expect(checkTemplateFields({ variables: many })).toBeDefined();
    expect(checkTemplateFields({ variables: many.slice(0, 50) })).toBeUndefined();
    expect(checkTemplateFields({ variables: [many[0]!, many[0]!] })?.message).toContain('declared twice');
    expect(checkTemplateFields({ variables: [{ key: 'N', type: 'number', fallback_value: '1' }] })?.message).toContain(
      '`N`',
    );
    expect(checkTemplateFields({ alias: '0192f1c4-7a3b-7c2d-8e4f-5a6b7c8d9e0f' })).toBeDefined();
    expect(checkTemplateFields({ alias: 'reset-password' })).toBeUndefined();
  });
});

describe('versionVariables', () => {
  it('keeps a key’s id and creation time across versions, and its update time unless it changed', () => {
    const later = new Date('2026-11-26T10:00:00Z');
    const next = versionVariables(
      [
        { key: 'NAME', type: 'string', fallback_value: null },
        { key: 'COUNT', type: 'number', fallback_value: 3 },
      ],
      content.variables,
      later,
    );
    expect(next[0]).toEqual(content.variables[0]);
    expect(next[1]).toMatchObject({
      id: content.variables[1]!.id,
      created_at: now.toISOString(),
      updated_at: later.toISOString(),
    });
  });
});

describe('renderTemplateSend', () => {
  const reference = (variables: Record<string, unknown>) => ({ idOrAlias: 't', variables });

  it('renders html escaped and text and subject unescaped, with declared fallbacks and template defaults', () => {
    const result = renderTemplateSend({ to: 'x@example.com', template: {} }, reference({ NAME: '<b>' }), content);
    expect(result).toEqual({
      ok: true,
      body: {
        to: 'x@example.com',
        from: 'Acme <a@example.com>',
        subject: 'For <b>',
        reply_to: null,
        html: '<p>&lt;b&gt; 2</p>',
        text: '<b> 2',
      },
    });
  });

  it('keeps the request’s from and subject', () => {
    const result = renderTemplateSend(
      { from: 'B <b@example.com>', subject: 'Mine' },
      reference({ NAME: 'n' }),
      content,
    );
    expect(result).toMatchObject({ ok: true, body: { from: 'B <b@example.com>', subject: 'Mine' } });
  });

  it('refuses a missing variable and a wrong type, naming the key; an empty string is a value', () => {
    expect(renderTemplateSend({}, reference({}), content)).toMatchObject({
      ok: false,
      refusal: { message: expect.stringContaining('`NAME`') },
    });
    expect(renderTemplateSend({}, reference({ NAME: 'n', COUNT: '3' }), content)).toMatchObject({
      ok: false,
      refusal: { message: expect.stringContaining('`COUNT`') },
    });
    expect(renderTemplateSend({}, reference({ NAME: '' }), content)).toMatchObject({ ok: true });
  });
});
