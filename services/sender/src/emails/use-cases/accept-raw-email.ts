// Accepting a raw email (POST /emails with message/rfc822, what the SMTP relay submits): the client's MIME
// is read for the request the JSON path would make of it, checked by the same rules (the verified sending
// domain, the key's own domain, recipients, tags), and accepted by the same statement (acceptEmails) with
// the MIME as it will be delivered: the same events, delivery commands and idempotency record.
import type { Kysely } from 'kysely';
import { newId, validationError } from '@postline/platform';
import type { IdempotencyKey } from '../db/accepted-requests.ts';
import type { SenderDb } from '../../db/schema.ts';
import { findSendingDomains } from '../../sending-domains/index.ts';
import {
  parseRawEmail,
  type RawEnvelope,
  readRawMessage,
  UnreadableMessage,
  preparedRawMessage,
  splitRawMessage,
  refusalError,
} from '../../message/index.ts';
import { acceptEmails, type RequestOrigin, type SingleAccepts } from './accept-emails.ts';
import { checkSender, SenderRefused, senderRefusal, withOnboarding, type SendGrant } from './sender-checks.ts';

export type AcceptRawDeps = { db: Kysely<SenderDb>; now: () => Date; singles: SingleAccepts };

/** RFC 5322 date-time in UTC (`Wed, 25 Nov 2026 13:00:00 +0000`). */
function rfc5322Date(at: Date): string {
  return at.toUTCString().replace(/GMT$/, '+0000');
}

/**
 * Accepts one raw email: 422 when it cannot be read or breaks a rule, 403 when its From domain or its
 * envelope sender's is not a verified sending domain of the team (or not the key's own domain), else its
 * id. The stored MIME is the client's without Bcc and the relay-only headers, with a Message-ID and a Date
 * added when missing, so that every attempt sends the same bytes.
 */
export async function acceptRawEmail(
  deps: AcceptRawDeps,
  input: {
    teamId: string;
    raw: Buffer;
    envelope: RawEnvelope;
    idempotencyKey: IdempotencyKey | undefined;
    grant: SendGrant;
    origin?: RequestOrigin | undefined;
  },
): Promise<{ id: string }> {
  const { teamId, grant } = input;
  const now = deps.now();
  const parts = splitRawMessage(input.raw);
  if (parts.fields.some((field) => field.bytes.includes(0))) {
    throw validationError('The message header contains a NUL character.', 422);
  }
  let fields: Awaited<ReturnType<typeof readRawMessage>>;
  try {
    fields = await readRawMessage(input.raw, parts);
  } catch (err) {
    if (err instanceof UnreadableMessage) throw validationError(err.message, 422);
    throw err;
  }
  const id = newId();
  const parsed = parseRawEmail(fields, input.envelope, id);
  if (!parsed.ok) throw refusalError(parsed.refusal);
  const { request, recipients, envelopeFromDomain, messageId } = parsed.email;

  const added = [
    ...(parsed.email.addMessageId ? [{ name: 'Message-ID', value: messageId }] : []),
    ...(fields.hasDate ? [] : [{ name: 'Date', value: rfc5322Date(now) }]),
  ];
  const mime = preparedRawMessage(parts, added);
  const raw = { id, recipients, messageId, mime };
  const otherEnvelopeDomain =
    envelopeFromDomain && envelopeFromDomain !== request.fromDomain ? envelopeFromDomain : undefined;
  if (input.idempotencyKey === undefined) {
    // Written together with the other single emails arriving meanwhile (one lookup, one statement, one commit).
    try {
      const accepted = await deps.singles.accept({
        teamId,
        request,
        grant,
        origin: input.origin,
        now,
        raw,
        ...(otherEnvelopeDomain ? { envelopeFromDomain: otherEnvelopeDomain } : {}),
      });
      return { id: accepted };
    } catch (err) {
      if (err instanceof SenderRefused) throw senderRefusal(err.refusal);
      throw err;
    }
  }

  const names = [
    request.fromDomain,
    ...(envelopeFromDomain && envelopeFromDomain !== request.fromDomain ? [envelopeFromDomain] : []),
  ];
  const domains = withOnboarding(
    await findSendingDomains(
      deps.db,
      names.map((name) => ({ teamId, name })),
    ),
  );
  const sender = checkSender(domains(teamId, request.fromDomain), request, grant);
  if (!sender.ok) throw senderRefusal(sender);
  if (envelopeFromDomain && envelopeFromDomain !== request.fromDomain) {
    const envelopeSender = checkSender(
      domains(teamId, envelopeFromDomain),
      { ...request, fromDomain: envelopeFromDomain },
      grant,
    );
    if (!envelopeSender.ok) throw senderRefusal(envelopeSender);
  }

  return acceptEmails(
    deps.db,
    {
      idempotency: input.idempotencyKey,
      emails: [{ request, domain: sender.domain, raw, origin: input.origin }],
      now,
    },
    (ids) => ({ id: ids[0] as string }),
  );
}
