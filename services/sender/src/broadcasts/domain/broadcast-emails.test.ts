import { describe, expect, it } from '@jest/globals';
import {
  checkBroadcastMessage,
  personaliseBroadcast,
  unsubscribeHeaders,
  type BroadcastMessage,
} from './broadcast-emails.ts';
import type { PropertyDefinition } from '../../audience/index.ts';

const message: BroadcastMessage = {
  fromHeader: 'Acme <news@example.com>',
  subject: 'Hi {{{contact.first_name|there}}}',
  replyTo: [],
  previewText: null,
  html: '<p>{{{FIRST_NAME|friend}}} {{{contact.last_name}}} {{{contact.plan}}} {{{contact.seats|none}}} <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">x</a></p>',
  text: '{{{contact.email}}} {{{EMAIL}}} {{{POSTLINE_UNSUBSCRIBE_URL}}}',
};
const properties: PropertyDefinition[] = [
  { id: 'p1', key: 'plan', type: 'string', fallback_value: 'free' },
  { id: 'p2', key: 'seats', type: 'number', fallback_value: null },
];
const URL = 'https://api.example.com/unsubscribe/token';

describe('personaliseBroadcast', () => {
  it('fills contact fields, properties and the unsubscribe link, escaping values in the html only', () => {
    const contact = {
      email: 'a&b@example.org',
      first_name: 'Ada <A>',
      last_name: 'King',
      properties: { p1: 'pro', p2: 3 },
    };
    expect(personaliseBroadcast(message, contact, properties, URL)).toEqual({
      subject: 'Hi Ada <A>',
      html: `<p>Ada &lt;A&gt; King pro 3 <a href="${URL}">x</a></p>`,
      text: `a&b@example.org a&b@example.org ${URL}`,
      missing: [],
    });
  });

  it('falls back to the property fallback, then the placeholder fallback, then nothing', () => {
    const contact = { email: 'a@example.org', first_name: null, last_name: null, properties: {} };
    const result = personaliseBroadcast(message, contact, properties, URL);
    expect(result.subject).toBe('Hi there');
    expect(result.html).toBe(`<p>friend  free none <a href="${URL}">x</a></p>`);
    expect(result.missing).toEqual(['contact.last_name']);
  });

  it('never lets a value break the subject header, and puts the preview text first, hidden', () => {
    const contact = {
      email: 'a@example.org',
      first_name: 'Ada\r\nBcc: x@example.com',
      last_name: null,
      properties: {},
    };
    const result = personaliseBroadcast({ ...message, previewText: 'Soon & now' }, contact, properties, URL);
    expect(result.subject).toBe('Hi Ada Bcc: x@example.com');
    expect(result.html).toMatch(/^<div style="display:none[^"]*" aria-hidden="true">Soon &amp; now<\/div><p>/);
  });
});

describe('unsubscribeHeaders', () => {
  it('gives the https link first, a mailto on the return path, and the one-click post header', () => {
    expect(unsubscribeHeaders(URL, 'send.example.com', 'tok.en')).toEqual([
      {
        name: 'List-Unsubscribe',
        value: `<${URL}>, <mailto:unsubscribe@send.example.com?subject=unsubscribe%20tok.en>`,
      },
      { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
    ]);
  });
});

describe('checkBroadcastMessage', () => {
  it('checks the message as POST /emails does', () => {
    expect(checkBroadcastMessage(message, new Date()).ok).toBe(true);
    expect(checkBroadcastMessage({ ...message, fromHeader: null }, new Date())).toEqual({
      ok: false,
      refusal: { name: 'missing_required_field', message: 'Missing `from` field.' },
    });
    expect(checkBroadcastMessage({ ...message, html: null, text: null }, new Date())).toMatchObject({ ok: false });
  });
});
