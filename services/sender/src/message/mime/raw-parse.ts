// Reading a raw email (POST /emails with message/rfc822) with mailparser: its addresses, subject and
// bodies for GET /emails/{id}, and from its header fields as written (raw-message.ts) the counts, the
// Message-ID and the tags header.
import type { AddressObject, EmailAddress, ParsedMail } from 'mailparser';
import { loadOnFirstUse } from '@postline/platform/pure';
import type { RawAddress, RawMessageFields } from '../domain/raw-email.ts';
import type { RawHeaderField, RawMessageParts } from './raw-message.ts';

/** mailparser could not read the message at all (it rarely refuses: most garbage reads as no headers). */
export class UnreadableMessage extends Error {
  override name = 'UnreadableMessage';
}

// Loaded with the first raw email: a sender that is never given one does not hold the parser's heap.
const mailparser = loadOnFirstUse(() => import('mailparser'));

/** The tags headers, in the order they are looked for. */
const TAG_HEADERS = ['X-Postline-Tags', 'X-Resend-Tags'];

/** The fields of `raw` (whose header fields `parts` are), as the domain reads them. */
export async function readRawMessage(raw: Buffer, parts: RawMessageParts): Promise<RawMessageFields> {
  const { simpleParser } = await mailparser();
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, {
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
      keepCidLinks: true,
    });
  } catch (err) {
    throw new UnreadableMessage('The message could not be read as MIME.', { cause: err });
  }
  const fieldCounts = new Map<string, number>();
  for (const field of parts.fields) fieldCounts.set(field.lowerName, (fieldCounts.get(field.lowerName) ?? 0) + 1);
  const tagHeader = TAG_HEADERS.find((name) => fieldCounts.has(name.toLowerCase()));
  const messageId = fieldValues(parts.fields, 'message-id')[0];
  return {
    fieldCounts,
    from: addressesOf(mail.from),
    to: addressesOf(mail.to),
    cc: addressesOf(mail.cc),
    bcc: addressesOf(mail.bcc),
    replyTo: addressesOf(mail.replyTo),
    subject: mail.subject ?? null,
    html: typeof mail.html === 'string' ? mail.html : null,
    text: mail.text ?? null,
    tags: tagHeader
      ? { header: tagHeader, value: fieldValues(parts.fields, tagHeader.toLowerCase()).join(', ') }
      : null,
    messageId: messageId === undefined ? null : messageId,
    hasDate: fieldCounts.has('date'),
  };
}

/** The values of the fields of one name, unfolded and trimmed. */
function fieldValues(fields: readonly RawHeaderField[], lowerName: string): string[] {
  return fields
    .filter((field) => field.lowerName === lowerName)
    .map((field) => {
      const text = field.bytes.toString('utf8');
      return text
        .slice(text.indexOf(':') + 1)
        .replace(/\r\n(?=[ \t])/g, '')
        .trim();
    });
}

/** Every address of a header, group members included (a group's name is not an address). */
function addressesOf(header: AddressObject | AddressObject[] | undefined): RawAddress[] {
  if (!header) return [];
  const objects = Array.isArray(header) ? header : [header];
  const flat = (list: readonly EmailAddress[]): RawAddress[] =>
    list.flatMap((entry) =>
      entry.group
        ? flat(entry.group)
        : entry.address
          ? [{ name: entry.name, address: entry.address }]
          : entry.name
            ? [{ name: '', address: entry.name }]
            : [],
    );
  return objects.flatMap((object) => flat(object.value));
}
