// Open and click tracking applied to an email's html before it is composed and signed (so DKIM signs what
// is sent). With click tracking each `<a href="http(s)://…">` points at the tracking host instead, its
// decoded href sealed in the token (tracking-links.ts); with open tracking a 1×1 pixel goes just before
// `</body>`. The text part is never touched.
//
// The html is not parsed into a tree: a small scanner walks it tag by tag (comments, `<script>`, `<style>`
// and `<textarea>` skipped whole; each `<a …>` tag's attributes read the way the HTML tokenizer reads them)
// and only the href values it rewrites change; every other byte stays as it was. Where the scanner is not
// sure what a browser would see (an unterminated quote, an entity it does not know), it leaves the link
// alone: an untracked link costs a click count, a wrong one breaks the customer's email.
import { TRACKING_TOKEN, trackingUrl, type TrackingLink } from './tracking-links.ts';

export type TrackingRewrite = {
  emailId: string;
  /** `<tracking_subdomain>.<domain name>` */
  trackingHost: string;
  open: boolean;
  click: boolean;
  /** Links starting with it are never rewritten: PUBLIC_BASE_URL + `/unsubscribe/`. */
  unsubscribePrefix: string;
  /** Seals a link into a token for this email's tracking host (TrackingCipher.seal with the host). */
  seal: (link: TrackingLink) => string;
};

/**
 * Attributes that keep a link untracked, whatever their value: ours, and Postmark's, so templates written for
 * it keep working. SendGrid's `clicktracking="off"` is honoured too (SKIP_VALUES).
 */
export const NO_TRACK_ATTRIBUTES = ['data-postline-no-track', 'data-pm-no-track'];
const SKIP_VALUES: Record<string, string> = { clicktracking: 'off' };

/** The html with tracking applied; unchanged when neither kind is on. */
export function rewriteForTracking(html: string, options: TrackingRewrite): string {
  if (!options.open && !options.click) return html;
  const edits: { start: number; end: number; text: string }[] = []; // in order of start, not overlapping
  let bodyEnd = -1; // the last `</body` outside comments and raw text
  let htmlEnd = -1; // the last `</html`, where the pixel goes when there is no `</body`
  const markup = /<!--|<(script|style|textarea)(?=[\s/>])|<a(?=[\s/>])|<\/body(?=[\s/>])|<\/html(?=[\s/>])/gi;
  for (let match = markup.exec(html); match !== null; match = markup.exec(html)) {
    const at = match.index;
    const found = match[0].toLowerCase();
    if (found === '<!--') {
      const end = html.indexOf('-->', at + 4);
      markup.lastIndex = end < 0 ? html.length : end + 3;
    } else if (match[1] !== undefined) {
      const close = new RegExp(`</${match[1]}(?=[\\s/>])`, 'gi');
      close.lastIndex = at + match[0].length;
      const end = close.exec(html);
      markup.lastIndex = end === null ? html.length : end.index + end[0].length;
    } else if (found === '</body') {
      bodyEnd = at;
    } else if (found === '</html') {
      htmlEnd = at;
    } else {
      const tag = readAttributes(html, at + 2);
      if (tag === undefined) break; // an unterminated tag: nothing after it is markup we can trust
      markup.lastIndex = tag.end;
      if (!options.click) continue;
      const href = tag.attributes.find((attribute) => attribute.name === 'href');
      if (href?.value === undefined || tag.attributes.some(skipsTracking)) continue;
      const url = trackedUrl(href.value, options.unsubscribePrefix);
      if (url === undefined) continue;
      const token = options.seal({ kind: 'click', emailId: options.emailId, url });
      if (!TRACKING_TOKEN.test(token)) continue; // a URL too long for a token stays as it is
      edits.push({
        start: href.valueStart,
        end: href.valueEnd,
        text: trackingUrl(options.trackingHost, 'click', token),
      });
    }
  }
  if (options.open) {
    const at = bodyEnd >= 0 ? bodyEnd : htmlEnd >= 0 ? htmlEnd : html.length;
    const token = options.seal({ kind: 'open', emailId: options.emailId, url: null });
    // Links may follow `</body>` (browsers still show them): the pixel goes among the edits in its place.
    const before = edits.findIndex((edit) => edit.start >= at);
    edits.splice(before < 0 ? edits.length : before, 0, {
      start: at,
      end: at,
      text: pixel(trackingUrl(options.trackingHost, 'open', token)),
    });
  }
  if (edits.length === 0) return html;
  const parts: string[] = [];
  let copied = 0; // html[0, copied) is in parts
  for (const edit of edits) {
    parts.push(html.slice(copied, edit.start), edit.text);
    copied = edit.end;
  }
  parts.push(html.slice(copied));
  return parts.join('');
}

/**
 * The open pixel. Not `display:none`: some clients do not fetch a hidden image, so it is a 1×1 image with
 * no border, margin or padding instead (as Postmark's), with an empty alt so that nothing shows when images
 * are off.
 */
function pixel(src: string): string {
  return (
    `<img src="${src}" width="1" height="1" alt="" border="0" ` +
    'style="height:1px !important;width:1px !important;border:0 !important;margin:0 !important;padding:0 !important" />'
  );
}

type Attribute = { name: string; value?: string; valueStart: number; valueEnd: number };

/**
 * The attributes of the tag whose name ends at `start`, as the HTML tokenizer reads them (names lowercased,
 * values raw), and where the tag ends (after its `>`); undefined when the tag or a quoted value never ends.
 */
function readAttributes(html: string, start: number): { attributes: Attribute[]; end: number } | undefined {
  const attributes: Attribute[] = [];
  let i = start;
  const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';
  while (i < html.length) {
    const c = html[i];
    if (isSpace(c) || c === '/') {
      i++;
      continue;
    }
    if (c === '>') return { attributes, end: i + 1 };
    const nameStart = i;
    i++; // the first character may be anything, `=` included
    while (i < html.length && !isSpace(html[i]) && html[i] !== '/' && html[i] !== '>' && html[i] !== '=') i++;
    const name = html.slice(nameStart, i).toLowerCase();
    let j = i;
    while (isSpace(html[j])) j++;
    if (html[j] !== '=') {
      attributes.push({ name, valueStart: i, valueEnd: i });
      continue;
    }
    j++;
    while (isSpace(html[j])) j++;
    const quote = html[j];
    if (quote === '"' || quote === "'") {
      const close = html.indexOf(quote, j + 1);
      if (close < 0) return undefined;
      attributes.push({ name, value: html.slice(j + 1, close), valueStart: j + 1, valueEnd: close });
      i = close + 1;
    } else {
      let end = j;
      while (end < html.length && !isSpace(html[end]) && html[end] !== '>') end++;
      attributes.push({ name, value: html.slice(j, end), valueStart: j, valueEnd: end });
      i = end;
    }
  }
  return undefined;
}

function skipsTracking(attribute: Attribute): boolean {
  if (NO_TRACK_ATTRIBUTES.includes(attribute.name)) return true;
  const off = SKIP_VALUES[attribute.name];
  return off !== undefined && attribute.value?.trim().toLowerCase() === off;
}

/**
 * The URL a browser would follow for a raw href value, if it is one to track: absolute http(s), not an
 * unsubscribe link, not a placeholder left unfilled (`{{{…}}}`), and with no character reference we cannot
 * decode with certainty.
 */
export function trackedUrl(rawHref: string, unsubscribePrefix: string): string | undefined {
  const url = decodeAttribute(rawHref)?.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '');
  if (url === undefined || !/^https?:\/\/[^/?#\s]/i.test(url) || url.includes('{{{')) return undefined;
  if (unsubscribePrefix !== '' && url.toLowerCase().startsWith(unsubscribePrefix.toLowerCase())) return undefined;
  // Sealed as a browser would send it (percent-encoded, no line breaks), so that the redirect's Location is
  // exactly where the link pointed; a link that does not parse is left as it is.
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
}

/** The named references an href plausibly holds, decoded (with their `;`, or as legacy names without it). */
const NAMED: Record<string, string> = {
  amp: '&',
  AMP: '&',
  lt: '<',
  LT: '<',
  gt: '>',
  GT: '>',
  quot: '"',
  QUOT: '"',
  apos: "'",
  nbsp: '\u00a0',
  sol: '/',
  colon: ':',
  equals: '=',
  quest: '?',
  num: '#',
  percnt: '%',
  plus: '+',
  comma: ',',
  period: '.',
  lowbar: '_',
  hyphen: '-',
  semi: ';',
};

/** The names HTML still decodes without their `;` (the legacy ones of the named character references). */
const LEGACY = (
  'AElig AMP Aacute Acirc Agrave Aring Atilde Auml COPY Ccedil ETH Eacute Ecirc Egrave Euml GT Iacute Icirc Igrave ' +
  'Iuml LT Ntilde Oacute Ocirc Ograve Oslash Otilde Ouml QUOT REG THORN Uacute Ucirc Ugrave Uuml Yacute aacute acirc ' +
  'acute aelig agrave amp aring atilde auml brvbar ccedil cedil cent copy curren deg divide eacute ecirc egrave eth ' +
  'euml frac12 frac14 frac34 gt iacute icirc iexcl igrave iquest iuml laquo lt macr micro middot nbsp not ntilde ' +
  'oacute ocirc ograve ordf ordm oslash otilde ouml para plusmn pound quot raquo reg sect shy sup1 sup2 sup3 szlig ' +
  'thorn times uacute ucirc ugrave uml uuml yacute yen yuml'
)
  .split(' ')
  .sort((a, b) => b.length - a.length);

/**
 * An attribute value with its character references decoded as the HTML tokenizer does; undefined when it
 * holds a reference a browser would decode to something we do not know (`&copy;`, `&copy/`): the URL is
 * then not certain, and the link is left untracked.
 */
function decodeAttribute(raw: string): string | undefined {
  if (!raw.includes('&')) return raw;
  let uncertain = false;
  const reference = /&(?:#(\d+);?|#[xX]([0-9a-fA-F]+);?|([A-Za-z][A-Za-z0-9]*);)/y;
  let decoded = '';
  let i = 0;
  while (i < raw.length) {
    const amp = raw.indexOf('&', i);
    if (amp < 0) break;
    decoded += raw.slice(i, amp);
    reference.lastIndex = amp;
    const match = reference.exec(raw);
    if (match !== null) {
      const [whole, dec, hex, name] = match;
      let value: string | undefined;
      if (name !== undefined) value = NAMED[name];
      else {
        const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex as string, 16);
        // 0, surrogates, C1 controls and beyond Unicode are replaced or remapped by the tokenizer.
        const plain =
          code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) && !(code >= 0x80 && code <= 0x9f);
        value = plain ? String.fromCodePoint(code) : undefined;
      }
      if (value === undefined) uncertain = true;
      decoded += value ?? whole;
      i = amp + whole.length;
      continue;
    }
    // No `;`: a legacy name is decoded unless a letter, digit or `=` follows it (`?a=1&copy=2` stays).
    const rest = raw.slice(amp + 1);
    const legacy = LEGACY.find((name) => rest.startsWith(name));
    if (legacy !== undefined && !/^[A-Za-z0-9=]/.test(rest.slice(legacy.length))) {
      const value = NAMED[legacy];
      if (value === undefined) uncertain = true;
      decoded += value ?? `&${legacy}`;
      i = amp + 1 + legacy.length;
      continue;
    }
    decoded += '&';
    i = amp + 1;
  }
  decoded += raw.slice(i);
  return uncertain ? undefined : decoded;
}
