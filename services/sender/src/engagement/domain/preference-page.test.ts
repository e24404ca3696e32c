import { describe, expect, it } from '@jest/globals';
import { maskEmail, parseUnsubscribeRequest, renderPreferencePage } from './preference-page.ts';

const TOPIC = '0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6';

describe('an unsubscribe POST body', () => {
  it('is the one-click unsubscribe whenever it carries List-Unsubscribe=One-Click', () => {
    expect(parseUnsubscribeRequest({ 'List-Unsubscribe': 'One-Click' })).toEqual({
      ok: true,
      request: { kind: 'one-click' },
    });
    expect(parseUnsubscribeRequest({ 'List-Unsubscribe': 'One-Click', unsubscribe_all: '1' })).toMatchObject({
      request: { kind: 'one-click' },
    });
  });

  it("is the page's choices otherwise: topics, and unsubscribe_all decided only by the page's own form", () => {
    expect(parseUnsubscribeRequest({ [`topics[${TOPIC.toUpperCase()}]`]: 'opt_out' })).toEqual({
      ok: true,
      request: { kind: 'preferences', unsubscribed: undefined, topics: [{ id: TOPIC, subscription: 'opt_out' }] },
    });
    expect(parseUnsubscribeRequest({ unsubscribe_all: '1' })).toMatchObject({ request: { unsubscribed: true } });
    expect(parseUnsubscribeRequest({ form: 'preferences' })).toMatchObject({
      request: { unsubscribed: false, topics: [] },
    });
  });

  it('is refused when it asks nothing or asks it wrongly', () => {
    const bodies: Record<string, string>[] = [
      {},
      { 'List-Unsubscribe': 'Yes' },
      { [`topics[${TOPIC}]`]: 'maybe' },
      { unsubscribe_all: 'yes' },
    ];
    for (const fields of bodies) {
      expect(parseUnsubscribeRequest(fields)).toMatchObject({ ok: false, refusal: { name: 'validation_error' } });
    }
  });
});

describe('the preference page', () => {
  it('masks the address', () => {
    expect(maskEmail('ada.lovelace@example.com')).toBe('ad•••@example.com');
    expect(maskEmail('bo@example.com')).toBe('b•••@example.com');
  });

  it("escapes what the team wrote, and marks the contact's current choices", () => {
    const html = renderPreferencePage(
      {
        email: 'ada@example.com',
        unsubscribed: true,
        topics: [{ id: TOPIC, name: '<b>News</b>', description: 'a & b', subscription: 'opt_out' }],
      },
      { saved: true },
    );
    expect(html).toContain('<legend>&lt;b&gt;News&lt;/b&gt;</legend>');
    expect(html).toContain('a &amp; b');
    expect(html).toContain(`name="topics[${TOPIC}]" value="opt_out" checked>`);
    expect(html).not.toContain(`value="opt_in" checked`);
    expect(html).toMatch(/name="unsubscribe_all" value="1" checked>/);
    expect(html).toContain('role="status"');
    expect(renderPreferencePage({ email: 'a@b.c', unsubscribed: false, topics: [] }, { saved: false })).not.toContain(
      'role="status"',
    );
  });
});
