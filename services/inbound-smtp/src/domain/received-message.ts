// A received message's fields as the API shows them (Resend's received-email fields), from what the MIME parser made
// of it. Pure: the parser's output comes in as plain values.

/** The SMTP session's facts about a message: never taken from the message's own Received headers. */
export type SessionFacts = {
  /** The connecting client's address. */
  ip: string;
  /** What the client said in EHLO/HELO. */
  helo: string;
  /** MAIL FROM as given (`''` for the null reverse-path of a DSN). */
  mailFrom: string;
};

/** One address of an address header (the parser flattens groups). */
export type ParsedAddress = { address: string; name: string };

export type ParsedAttachment = {
  filename: string | null;
  contentType: string;
  /** `inline` or `attachment` as the part said, or null. */
  contentDisposition: string | null;
  /** Without angle brackets, or null. */
  contentId: string | null;
  content: Buffer;
};

/** What the MIME parser made of a message; `error` when it gave up part way (the rest best-effort). */
export type ParsedMessage = {
  /** The header block's lines as received (`Name: value`, folded), bytes as latin1 characters. */
  headerLines: { key: string; line: string }[];
  from: ParsedAddress[];
  to: ParsedAddress[];
  cc: ParsedAddress[];
  bcc: ParsedAddress[];
  replyTo: ParsedAddress[];
  subject: string;
  messageId: string | null;
  html: string | null;
  text: string | null;
  attachments: ParsedAttachment[];
  error: string | null;
};

/** The fields a received email keeps of its message. */
export type ReceivedFields = {
  messageId: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
};

/**
 * The received email's fields: bare addresses, the headers as a map, and a Message-ID of our own
 * (`<emailId@mxHost>`) when the message has none, so that every received email has one.
 */
export function receivedFields(parsed: ParsedMessage, fallbackMessageId: string): ReceivedFields {
  const bare = (list: ParsedAddress[]) => list.map((a) => storable(a.address)).filter((address) => address !== '');
  const messageId = storable(parsed.messageId ?? '').trim();
  const headers = headerMap(parsed.headerLines);
  for (const name of Object.keys(headers)) headers[name] = storable(headers[name]!);
  return {
    messageId: messageId !== '' ? messageId : fallbackMessageId,
    from: bare(parsed.from)[0] ?? '',
    to: bare(parsed.to),
    cc: bare(parsed.cc),
    bcc: bare(parsed.bcc),
    replyTo: bare(parsed.replyTo),
    subject: storable(parsed.subject),
    html: parsed.html === null ? null : storable(parsed.html),
    text: parsed.text === null ? null : storable(parsed.text),
    headers,
  };
}

/**
 * Text as Postgres can store it: a NUL character (which a sender may put in any part of a message) is
 * refused by text and jsonb columns, so it is dropped; the raw message keeps it.
 */
export function storable(value: string): string {
  // A lone UTF-16 surrogate (an encoded word decoded from UTF-16 halfway) is not text JSON may carry either.
  const whole = value.isWellFormed() ? value : value.toWellFormed();
  return whole.includes('\0') ? whole.replaceAll('\0', '') : whole;
}

/**
 * Lower-case header names → values, unfolded, with RFC 2047 encoded words decoded and raw 8-bit text read
 * as UTF-8 (RFC 6532). A header that appears more than once (Received) gives its first, topmost occurrence,
 * the one a mail reader shows.
 */
export function headerMap(lines: readonly { key: string; line: string }[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, line } of lines) {
    // A name is the client's bytes too: it may hold a NUL, which Postgres refuses in text and jsonb.
    const name = storable(key.toLowerCase());
    if (Object.hasOwn(headers, name)) continue;
    const colon = line.indexOf(':');
    const raw = colon < 0 ? '' : line.slice(colon + 1);
    const unfolded = Buffer.from(raw.replace(/\r?\n(?=[ \t])/g, ''), 'latin1')
      .toString('utf8')
      .trim();
    headers[name] = decodeEncodedWords(unfolded);
  }
  return headers;
}

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/**
 * Decodes RFC 2047 encoded words (`=?utf-8?B?…?=`, `=?iso-8859-1?Q?…?=`); whitespace between two adjacent
 * encoded words is dropped (RFC 2047 §6.2). A word in a charset Node cannot decode is left as it is.
 */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value;
  return value
    .replace(/(\?=)\s+(?==\?)/g, '$1')
    .replace(ENCODED_WORD, (word, charset: string, encoding: string, text: string) => {
      try {
        const label = charset.split('*')[0] ?? charset;
        const bytes =
          encoding.toUpperCase() === 'B'
            ? Buffer.from(text, 'base64')
            : Buffer.from(
                text
                  .replace(/_/g, ' ')
                  .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
                'latin1',
              );
        return new TextDecoder(label).decode(bytes);
      } catch {
        return word;
      }
    });
}

/**
 * What can be read from a message the MIME parser could not parse at all: its header block (up to the first
 * empty line, or the whole message when it has none), the subject, the first address of each address header.
 */
export function bestEffortMessage(raw: Buffer, error: string): ParsedMessage {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const block = end < 0 ? text : text.slice(0, end);
  const headerLines: { key: string; line: string }[] = [];
  for (const line of block.split(/\r\n(?![ \t])/)) {
    const match = /^([!-9;-~]+):/.exec(line);
    if (match) headerLines.push({ key: match[1]!.toLowerCase(), line });
  }
  const headers = headerMap(headerLines);
  const addresses = (name: string): ParsedAddress[] => {
    const value = headers[name];
    if (!value) return [];
    const address = /<([^<>\s]+@[^<>\s]+)>/.exec(value)?.[1] ?? /[^\s<>,;:"]+@[^\s<>,;:"]+/.exec(value)?.[0];
    return address ? [{ address, name: '' }] : [];
  };
  return {
    headerLines,
    from: addresses('from'),
    to: addresses('to'),
    cc: addresses('cc'),
    bcc: addresses('bcc'),
    replyTo: addresses('reply-to'),
    subject: headers.subject ?? '',
    messageId: /<[^<>\s]+>/.exec(headers['message-id'] ?? '')?.[0] ?? null,
    html: null,
    text: null,
    attachments: [],
    error,
  };
}
