import { describe, expect, it } from '@jest/globals';
import { createTrackingCipher } from './tracking-links.ts';
import { rewriteForTracking, trackedUrl, type TrackingRewrite } from './tracking-rewrite.ts';

const cipher = createTrackingCipher('tracking-rewrite-test-key-0123456789');
const emailId = '0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6';
const HOST = 'links.acme.example.com';
const UNSUBSCRIBE = 'https://api.postline.test/unsubscribe/';
const options: TrackingRewrite = {
  emailId,
  trackingHost: HOST,
  open: false,
  click: true,
  unsubscribePrefix: UNSUBSCRIBE,
  seal: (link) => cipher.seal(link, HOST),
};
const click = (html: string) => rewriteForTracking(html, options);

const CLICK_URL = /https:\/\/links\.acme\.example\.com\/c\/([A-Za-z0-9_-]+)/g;
/** The original URL of every tracking link in `html`, in order. */
function clicked(html: string): (string | null | undefined)[] {
  return [...html.matchAll(CLICK_URL)].map((m) => cipher.open(m[1] as string, 'click', HOST)?.url);
}

describe('click tracking', () => {
  it('rewrites http and https links, whatever the quoting, case and attribute order, and nothing else', () => {
    const html =
      '<p><a href="https://example.com/a">A</a> <A class="x" HREF=\'http://example.com/b\' id=y>B</A> ' +
      '<a target=_blank href=https://example.com/c>C</a> <a\nhref = "HTTPS://Example.com/d?x=1#top"\n>D</a></p>';
    const out = click(html);
    expect(clicked(out)).toEqual([
      'https://example.com/a',
      'http://example.com/b',
      'https://example.com/c',
      'https://example.com/d?x=1#top',
    ]);
    // Only the href values changed: the rest of each tag and the text between them are byte for byte.
    expect(out.replace(CLICK_URL, 'URL')).toBe(
      '<p><a href="URL">A</a> <A class="x" HREF=\'URL\' id=y>B</A> <a target=_blank href=URL>C</a> <a\nhref = "URL"\n>D</a></p>',
    );
  });

  it('seals the decoded href: &amp; and numeric references decode, a literal & stays', () => {
    const out = click(
      '<a href="https://example.com/?a=1&amp;b=2&#38;c=3&#x26;d=4">1</a><a href="https://example.com/?a=1&b=2&copy=3">2</a>' +
        '<a href="https://example.com/?q=&quot;x&quot;&amp">3</a>',
    );
    expect(clicked(out)).toEqual([
      'https://example.com/?a=1&b=2&c=3&d=4',
      'https://example.com/?a=1&b=2&copy=3',
      'https://example.com/?q=%22x%22&',
    ]);
  });

  it('seals the URL as a browser sends it: line breaks dropped, non-ASCII percent-encoded, the host in punycode', () => {
    const out = click(
      '<a href="https://example.com/long/\npath?x=1&#10;2">1</a><a href="https://пример.рф/日本?é=ü">2</a>',
    );
    expect(clicked(out)).toEqual([
      'https://example.com/long/path?x=12',
      'https://xn--e1afmkfd.xn--p1ai/%E6%97%A5%E6%9C%AC?%C3%A9=%C3%BC',
    ]);
  });

  it('binds a token to its tracking host: on another host it opens to nothing', () => {
    const [token] = [...click('<a href="https://example.com/">x</a>').matchAll(CLICK_URL)].map((m) => m[1] as string);
    expect(cipher.open(token as string, 'click', HOST)?.url).toBe('https://example.com/');
    expect(cipher.open(token as string, 'click', 'LINKS.ACME.EXAMPLE.COM:443')?.url).toBe('https://example.com/');
    expect(cipher.open(token as string, 'click', 'links.other.example.com')).toBeUndefined();
  });

  it('leaves a link whose URL a browser would decode in a way it cannot be sure of', () => {
    const html =
      '<a href="https://example.com/&copy;">1</a><a href="https://example.com/?a&copy/">2</a><a href="https://example.com/&#0;">3</a>';
    expect(click(html)).toBe(html);
  });

  it('leaves mailto:, tel:, anchors, relative and javascript: links, and an a without href', () => {
    const html =
      '<a href="mailto:hi@example.com">m</a><a href="tel:+441234">t</a><a href="#top">#</a><a href="/path">r</a>' +
      '<a href="//example.com/x">p</a><a href="javascript:alert(1)">j</a><a name="x">n</a><a href="https:/x">h</a>';
    expect(click(html)).toBe(html);
  });

  it('leaves unsubscribe links and {{{…}}} placeholders left unfilled', () => {
    const html =
      `<a href="${UNSUBSCRIBE}abc.def">u</a><a href="HTTPS://API.POSTLINE.TEST/unsubscribe/x">U</a>` +
      '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">p</a><a href="https://example.com/?id={{{contact.id}}}">q</a>';
    expect(click(html)).toBe(html);
  });

  it('leaves links marked data-postline-no-track, data-pm-no-track or clicktracking=off', () => {
    const html =
      '<a data-postline-no-track href="https://example.com/1">1</a><a href="https://example.com/2" DATA-PM-NO-TRACK="">2</a>' +
      '<a clicktracking="off" href="https://example.com/3">3</a><a clicktracking="on" href="https://example.com/4">4</a>';
    const out = click(html);
    expect(clicked(out)).toEqual(['https://example.com/4']);
    expect(out.startsWith(html.slice(0, html.indexOf('<a clicktracking="on"')))).toBe(true);
  });

  it('leaves links inside comments (Outlook conditionals too), scripts, styles and textareas', () => {
    const html =
      '<!-- <a href="https://example.com/1">1</a> --><!--[if mso]><a href="https://example.com/2">2</a><![endif]-->' +
      '<script>var s = \'<a href="https://example.com/3">\';</script><style>a[href="https://example.com/4"]{}</style>' +
      '<textarea><a href="https://example.com/5"></textarea><a href="https://example.com/6">6</a>';
    expect(clicked(click(html))).toEqual(['https://example.com/6']);
  });

  it('takes the first of repeated href attributes, reads > inside quotes, and stops at an unterminated tag', () => {
    expect(clicked(click('<a title="a > b" href="https://example.com/1" href="https://example.com/2">x</a>'))).toEqual([
      'https://example.com/1',
    ]);
    const broken = '<a href="https://example.com/1">1</a><a href="https://example.com/2>2</a>';
    const out = click(broken);
    expect(clicked(out)).toEqual(['https://example.com/1']);
    expect(out.endsWith('<a href="https://example.com/2>2</a>')).toBe(true);
  });

  it('does not touch <area>, <abbr> or <link> tags, nor a URL in text', () => {
    const html =
      '<abbr href="https://example.com/1">x</abbr><link href="https://example.com/2"><p>https://example.com/3</p>';
    expect(click(html)).toBe(html);
  });

  it('leaves a URL too long for a token as it is', () => {
    const html = `<a href="https://example.com/${'x'.repeat(4000)}">long</a>`;
    expect(click(html)).toBe(html);
  });

  it('names the email in each token, each a different token', () => {
    const out = click('<a href="https://example.com/">1</a><a href="https://example.com/">2</a>');
    const tokens = [...out.matchAll(CLICK_URL)].map((m) => m[1] as string);
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).not.toBe(tokens[1]);
    expect(cipher.open(tokens[0] as string, 'click', HOST)).toEqual({
      kind: 'click',
      emailId,
      url: 'https://example.com/',
    });
    expect(cipher.open(tokens[0] as string, 'open', HOST)).toBeUndefined();
  });
});

describe('open tracking', () => {
  const open = (html: string) => rewriteForTracking(html, { ...options, open: true, click: false });
  const PIXEL =
    /<img src="https:\/\/links\.acme\.example\.com\/o\/([A-Za-z0-9_-]+)" width="1" height="1" alt="" border="0" style="[^"]*" \/>/;

  it('puts a 1×1 pixel just before the last </body>, naming the email, and leaves links alone', () => {
    const html = '<html><body><a href="https://example.com/">x</a><!-- </body> --></BODY></html>';
    const out = open(html);
    const pixel = PIXEL.exec(out);
    expect(pixel).not.toBeNull();
    expect(out.replace(PIXEL, '')).toBe(html);
    expect(out.indexOf(pixel?.[0] as string)).toBe(html.indexOf('</BODY>'));
    expect(cipher.open(pixel?.[1] as string, 'open', HOST)).toEqual({ kind: 'open', emailId, url: null });
    expect(cipher.open(pixel?.[1] as string, 'click', HOST)).toBeUndefined();
  });

  it('puts it before </html> when there is no </body>, else at the end', () => {
    expect(open('<html><p>hi</p></html>')).toMatch(/^<html><p>hi<\/p><img [^>]+\/><\/html>$/);
    expect(open('<p>hi</p>')).toMatch(/^<p>hi<\/p><img [^>]+\/>$/);
  });

  it('with click tracking on, puts the pixel in its place among links before and after </body>', () => {
    const html = '<body><a href="https://example.com/1">1</a></body><a href="https://example.com/2">2</a>';
    const out = rewriteForTracking(html, { ...options, open: true, click: true });
    expect(clicked(out)).toEqual(['https://example.com/1', 'https://example.com/2']);
    expect(out.replace(CLICK_URL, 'URL').replace(PIXEL, 'PIXEL')).toBe(
      '<body><a href="URL">1</a>PIXEL</body><a href="URL">2</a>',
    );
  });

  it('with click tracking too, rewrites links and adds the pixel', () => {
    const out = rewriteForTracking('<body><a href="https://example.com/">x</a></body>', {
      ...options,
      open: true,
      click: true,
    });
    expect(clicked(out)).toEqual(['https://example.com/']);
    expect(out).toMatch(
      /^<body><a href="https:\/\/links\.acme\.example\.com\/c\/[A-Za-z0-9_-]+">x<\/a><img [^>]+\/><\/body>$/,
    );
  });
});

describe('tracking off', () => {
  it('returns the html itself', () => {
    const html = '<body><a href="https://example.com/">x</a></body>';
    expect(rewriteForTracking(html, { ...options, open: false, click: false })).toBe(html);
  });
});

describe('trackedUrl', () => {
  it('trims the whitespace a browser trims, and refuses what is not absolute http(s)', () => {
    expect(trackedUrl('  https://example.com/x \n', UNSUBSCRIBE)).toBe('https://example.com/x');
    expect(trackedUrl('ftp://example.com/', UNSUBSCRIBE)).toBeUndefined();
    expect(trackedUrl('https://', UNSUBSCRIBE)).toBeUndefined();
  });
});
