import { Router, type Request } from 'express';
import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import { PaginationQuery } from '@postline/contracts';
import {
  ApiError,
  enqueue,
  IDEMPOTENCY_HASH_HEADER,
  IDEMPOTENCY_HEADER,
  KEY_DOMAIN_HEADER,
  formatTimestamp,
  isUuid,
  notFound,
  paginate,
  parseInput,
  route,
  teamOf,
  validationError,
  type Counter,
} from '@postline/platform';
import { acceptEmails, checkSender, findSendingDomains, lockEmail, scheduleMessages, SenderRefused, sendTimerKey, type Accepted, type Idempotency, type SingleAccept } from '../accept.ts';
import type { EmailRow, SenderDb, Tag } from '../db/schema.ts';
import { parseEmailRequest, parseScheduledAt, type EmailRequest } from '../domain/email-request.ts';

export const MAX_BATCH = 100;

export type EmailRouteDeps = {
  db: Kysely<SenderDb>;
  now: () => Date;
  accepted: Counter<'kind'>;
  /** Accepts single emails in groups (createSingleAccepts). */
  singles: { accept: (input: SingleAccept) => Promise<string> };
};

/** The request's idempotency key and the gateway's hash of the request, when it came with one. */
function idem(req: Request, teamId: string): Idempotency | undefined {
  const key = req.header(IDEMPOTENCY_HEADER);
  if (key === undefined) return undefined;
  const requestHash = req.header(IDEMPOTENCY_HASH_HEADER);
  return requestHash === undefined ? { teamId, key } : { teamId, key, requestHash };
}

/** `/emails` as in API-REFERENCE.md §1; the team comes from the gateway's header. */
export function emailRoutes(deps: EmailRouteDeps): Router {
  const router = Router();
  route(router, '/emails', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const request = parseEmailRequest(req.body, { now: deps.now(), batch: false });
      checkTopic(request);
      const idempotency = idem(req, teamId);
      let body: { id: string };
      if (idempotency === undefined) {
        // Most requests: written together with the others arriving meanwhile (one statement, one commit).
        try {
          body = { id: await deps.singles.accept({ teamId, request, keyDomainId: keyDomain(req), now: deps.now() }) };
        } catch (err) {
          if (err instanceof SenderRefused) throw validationError(err.message, 403);
          throw err;
        }
      } else {
        const domainOf = await findSendingDomains(deps.db, [{ teamId, name: request.fromDomain }]);
        const sender = checkSender(domainOf(teamId, request.fromDomain), request, keyDomain(req));
        if (!sender.ok) throw validationError(sender.message, 403);
        body = await acceptEmails(
          deps.db,
          { idempotency, emails: [{ request, domain: sender.domain }], now: deps.now() },
          (ids) => ({ id: ids[0] as string }),
        );
      }
      deps.accepted.inc({ kind: 'single' });
      res.json(body);
    },
    get: async (req, res) => {
      const teamId = teamOf(res);
      const query = parseInput(PaginationQuery, req.query);
      const page = await paginate(deps.db.selectFrom('emails').selectAll().where('team_id', '=', teamId), query);
      res.json({ ...page, data: page.data.map(listItem) });
    },
  });

  route(router, '/emails/batch', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const mode = batchMode(req);
      if (!Array.isArray(req.body)) throw validationError('The request body must be an array of emails.');
      const items: unknown[] = req.body;
      if (items.length === 0) throw validationError('The batch must contain at least one email.');
      if (items.length > MAX_BATCH) throw validationError(`A batch can contain at most ${MAX_BATCH} emails.`);

      const now = deps.now();
      const parsed: (EmailRequest | ApiError)[] = items.map((item) => {
        try {
          return checkTopic(parseEmailRequest(item, { now, batch: true }));
        } catch (err) {
          if (err instanceof ApiError) return err;
          throw err;
        }
      });
      const requests = parsed.filter((p): p is EmailRequest => !(p instanceof ApiError));
      const domainOf = await findSendingDomains(deps.db, requests.map((r) => ({ teamId, name: r.fromDomain })));
      const keyDomainId = keyDomain(req);

      const accepted: Accepted[] = [];
      const errors: { index: number; message: string }[] = [];
      parsed.forEach((item, index) => {
        let error: ApiError | undefined;
        if (item instanceof ApiError) error = item;
        else {
          const sender = checkSender(domainOf(teamId, item.fromDomain), item, keyDomainId);
          if (sender.ok) accepted.push({ request: item, domain: sender.domain });
          else error = validationError(sender.message, 403);
        }
        if (!error) return;
        // strict: the first invalid email refuses the whole batch, naming its index.
        if (mode === 'strict') throw new ApiError(error.statusCode, error.name, `emails[${index}]: ${error.message}`);
        errors.push({ index, message: error.message });
      });

      const body = await acceptEmails(
        deps.db,
        { idempotency: idem(req, teamId), emails: accepted, now },
        (ids) => (mode === 'strict' ? { data: ids.map((id) => ({ id })) } : { data: ids.map((id) => ({ id })), errors }),
      );
      deps.accepted.inc({ kind: 'batch' }, accepted.length);
      res.json(body);
    },
  });

  // Out of scope (API-REFERENCE.md §9); without this route it would read as an email id.
  route(router, '/emails/metrics', {
    get: () => {
      throw notFound('Email metrics are not available yet.');
    },
  });

  route(router, '/emails/:id', {
    get: async (req, res) => {
      const email = await findEmail(deps.db, teamOf(res), req.params.id);
      res.json(emailBody(email));
    },
    patch: async (req, res) => {
      const teamId = teamOf(res);
      const id = emailId(req.params.id);
      const body = parseInput(RescheduleBody, req.body);
      const at = parseScheduledAt(body.scheduled_at, deps.now());
      await deps.db.transaction().execute(async (trx) => {
        await lockScheduled(trx, teamId, id, 'rescheduled');
        const updated = await trx
          .updateTable('emails')
          .set({ scheduled_at: at })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await enqueue(trx, scheduleMessages(updated, at, false));
      });
      res.json({ object: 'email', id });
    },
  });

  route(router, '/emails/:id/cancel', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const id = emailId(req.params.id);
      await deps.db.transaction().execute(async (trx) => {
        await lockScheduled(trx, teamId, id, 'canceled');
        await trx.updateTable('emails').set({ status: 'canceled', last_event: 'canceled' }).where('id', '=', id).execute();
        await trx.updateTable('recipients').set({ status: 'canceled' }).where('email_id', '=', id).execute();
        await enqueue(trx, [{ exchange: 'commands', type: 'scheduler.cancel-timer', team_id: teamId, data: { key: sendTimerKey(id) } }]);
      });
      res.json({ object: 'email', id });
    },
  });
  return router;
}

// The reference documents ISO 8601 here; natural language is accepted as on create.
const RescheduleBody = z.object({ scheduled_at: z.string({ message: 'must be a date string' }) });

/** Topics (and contacts' subscriptions to them) are not built yet, so no topic id can name one. */
function checkTopic(request: EmailRequest): EmailRequest {
  if (request.topicId !== null) throw notFound('Topic not found');
  return request;
}

function batchMode(req: Request): 'strict' | 'permissive' {
  const value = (req.header('x-batch-validation') ?? req.header('x-resend-batch-validation') ?? 'strict').toLowerCase();
  if (value !== 'strict' && value !== 'permissive') {
    throw validationError('The `x-batch-validation` header must be `strict` or `permissive`.');
  }
  return value;
}

function keyDomain(req: Request): string | undefined {
  const value = req.header(KEY_DOMAIN_HEADER);
  return value && isUuid(value) ? value : undefined;
}

/** Row-locks the team's email, which must still be scheduled to be `done` to (else 404, or 403 naming its state). */
async function lockScheduled(trx: Transaction<SenderDb>, teamId: string, id: string, done: 'rescheduled' | 'canceled'): Promise<EmailRow> {
  const email = await lockEmail(trx, teamId, id);
  if (!email) throw notFound('Email not found');
  if (email.status !== 'scheduled') throw validationError(`Only a scheduled email can be ${done}; this email is ${email.last_event}.`, 403);
  return email;
}

function emailId(id: string | undefined): string {
  if (!id || !isUuid(id)) throw notFound('Email not found');
  return id;
}

export async function findEmail(db: Kysely<SenderDb>, teamId: string, id: string | undefined): Promise<EmailRow> {
  const email = await db
    .selectFrom('emails')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', emailId(id))
    .executeTakeFirst();
  if (!email) throw notFound('Email not found');
  return email;
}

function listItem(email: EmailRow) {
  return {
    id: email.id,
    to: email.to_addresses,
    from: email.from_header,
    created_at: formatTimestamp(email.created_at),
    subject: email.subject,
    bcc: email.bcc_addresses,
    cc: email.cc_addresses,
    reply_to: email.reply_to,
    last_event: email.last_event,
    scheduled_at: email.scheduled_at ? formatTimestamp(email.scheduled_at) : null,
    message_id: email.message_id,
    topic_id: null,
  };
}

function emailBody(email: EmailRow) {
  return {
    object: 'email',
    ...listItem(email),
    html: email.html,
    text: email.text,
    tags: (email.tags as unknown as Tag[]).map((t) => ({ name: t.name, value: t.value })),
  };
}
