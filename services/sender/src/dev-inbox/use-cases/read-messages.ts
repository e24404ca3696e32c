import type { Kysely } from 'kysely';
import { isUuid, loadOnFirstUse, notFound } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { findKeptMessage, type KeptMessageItem } from '../db/messages.ts';

/** A kept message read as a mail client shows it: its header fields in order, its parts, its attachments. */
// mailparser is loaded when a kept message is first read, not at the sender's start.
const mailparser = loadOnFirstUse(() => import('mailparser'));

export type ReadMessage = KeptMessageItem & {
  envelope_from: string;
  headers: { name: string; value: string }[];
  html: string | null;
  text: string | null;
  attachments: { filename: string | null; content_type: string; size: number }[];
};

/** One kept message of the team, as stored (raw), or 404. */
export async function getKeptMessage(db: Kysely<SenderDb>, teamId: string, id: string | undefined) {
  const message = id && isUuid(id) ? await findKeptMessage(db, teamId, id) : undefined;
  if (!message) throw notFound('Message not found');
  return message;
}

/** One kept message of the team, read (inline images as data: URIs, for a sandboxed preview), or 404. */
export async function readKeptMessage(
  db: Kysely<SenderDb>,
  teamId: string,
  id: string | undefined,
): Promise<ReadMessage> {
  const { raw, ...message } = await getKeptMessage(db, teamId, id);
  const { simpleParser } = await mailparser();
  const mail = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true });
  return {
    ...message,
    headers: mail.headerLines.map(({ line }) => {
      const colon = line.indexOf(':');
      return {
        name: line.slice(0, colon),
        value: line
          .slice(colon + 1)
          .replace(/\r?\n[ \t]+/g, ' ')
          .trim(),
      };
    }),
    html: typeof mail.html === 'string' ? mail.html : null,
    text: mail.text ?? null,
    attachments: mail.attachments
      .filter((attachment) => !attachment.related)
      .map((attachment) => ({
        filename: attachment.filename ?? null,
        content_type: attachment.contentType || 'application/octet-stream',
        size: attachment.size,
      })),
  };
}
