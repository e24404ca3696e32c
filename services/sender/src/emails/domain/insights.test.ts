import { describe, expect, it } from '@jest/globals';
import { emailInsights, GMAIL_CLIP_BYTES, readHtml, type InsightInput } from './insights.ts';

const clean: InsightInput = {
  html: '<p>Hi</p><a href="https://acme.com/orders/1">Your order</a><img src="https://cdn.acme.com/logo.png" alt="Acme">',
  text: null,
  fromDomain: 'mail.acme.com',
  headers: [],
  bulk: false,
  raw: false,
  tracking: { on: false, host: null },
  dmarc: true,
};

const failing = (input: InsightInput) =>
  emailInsights(input)
    .filter((i) => !i.passed)
    .map((i) => i.id);

describe('email insights', () => {
  it('passes a clean transactional email, in two groups, each insight saying why', () => {
    const insights = emailInsights(clean);
    expect(insights.every((i) => i.passed)).toBe(true);
    expect(insights.filter((i) => i.group === 'needs_attention').map((i) => i.id)).toEqual([
      'dmarc_record',
      'html_size',
      'list_unsubscribe',
    ]);
    expect(insights.every((i) => i.detail.length > 10)).toBe(true);
  });

  it('flags a missing DMARC record, but not a DNS failure', () => {
    expect(failing({ ...clean, dmarc: false })).toEqual(['dmarc_record']);
    expect(failing({ ...clean, dmarc: null })).toEqual([]);
  });

  it('flags HTML past Gmail’s clipping size, counted in bytes', () => {
    const big = `<p>${'é'.repeat(GMAIL_CLIP_BYTES / 2)}</p>`;
    expect(failing({ ...clean, html: big })).toEqual(['html_size']);
    expect(failing({ ...clean, html: `<p>${'x'.repeat(GMAIL_CLIP_BYTES - 10)}</p>` })).toEqual([]);
  });

  it('asks List-Unsubscribe of bulk mail only', () => {
    expect(failing({ ...clean, bulk: true })).toEqual(['list_unsubscribe']);
    const unsubscribe = [{ name: 'List-Unsubscribe', value: '<https://acme.com/u/1>' }];
    expect(failing({ ...clean, bulk: true, headers: unsubscribe })).toEqual([]);
  });

  it('flags an HTML-only message, not a text-only one', () => {
    expect(failing({ ...clean, text: '' })).toEqual(['text_part']);
    expect(failing({ ...clean, html: null, text: '' })).toEqual([]);
    // A raw message is sent as written: without a text part it has none.
    expect(failing({ ...clean, raw: true, text: null })).toEqual(['text_part']);
    expect(failing({ ...clean, raw: true, text: 'Hi' })).toEqual([]);
  });

  it('flags links to other organisations, not to the sender’s own or its tracking host', () => {
    const html = '<a href="https://bit.ly/x">a</a><a href="https://links.acme.com/t">b</a><a href="/relative">c</a>';
    const insight = emailInsights({ ...clean, html }).find((i) => i.id === 'link_domains')!;
    expect(insight.passed).toBe(false);
    expect(insight.detail).toContain('bit.ly');
    expect(insight.detail).not.toContain('links.acme.com');
    expect(
      failing({
        ...clean,
        html: '<a href="https://t.example.net/x">a</a>',
        tracking: { on: true, host: 't.example.net' },
      }),
    ).toEqual([]);
  });

  it('flags tracking asked for without a tracking host of its own', () => {
    expect(failing({ ...clean, tracking: { on: true, host: null } })).toEqual(['tracking_domain']);
    expect(failing({ ...clean, tracking: { on: true, host: 'links.mail.acme.com' } })).toEqual([]);
  });

  it('counts images without any alt attribute (an empty alt marks a decorative image)', () => {
    expect(readHtml('<img src="a"><IMG SRC="b" ALT=""><img src="c" alt="C">').imagesWithoutAlt).toBe(1);
    expect(failing({ ...clean, html: '<img src="a.png">' })).toEqual(['image_alt']);
  });
});
