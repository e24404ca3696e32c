import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Router, type Request } from 'express';
import type { Kysely } from 'kysely';
import {
  ApiRequests,
  ENVELOPE_FROM_HEADER,
  ENVELOPE_TO_HEADER,
  PaginationQuery,
  RAW_EMAIL_BODY,
  rawBodyNeedsSlot,
} from '@postline/contracts';
import {
  createSlots,
  IDEMPOTENCY_HASH_HEADER,
  IDEMPOTENCY_HEADER,
  KEY_DOMAIN_HEADER,
  TEAM_MEMBERS_HEADER,
  KEY_HEADER,
  REQUEST_LOG_HEADER,
  formatTimestamp,
  isUuid,
  parseInput,
  readRawBody,
  route,
  teamOf,
  validationError,
  type Counter,
} from '@postline/platform';
import type { IdempotencyKey } from '../db/accepted-requests.ts';
import type { EmailRow, SenderDb, Tag } from '../../db/schema.ts';
import {
  acceptBatch,
  acceptEmail,
  type BatchMode,
  type RequestOrigin,
  type SingleAccepts,
} from '../use-cases/accept-emails.ts';
import { acceptRawEmail } from '../use-cases/accept-raw-email.ts';
import type { SendGrant } from '../use-cases/sender-checks.ts';
import {
  checkEmailId,
  emailsToExport,
  eventsOf,
  getEmail,
  pageOfEmails,
  recipientsOf,
} from '../use-cases/read-emails.ts';
import { emailMetrics } from '../use-cases/email-metrics.ts';
import { EMAIL_CSV_HEADER, emailCsvLine } from '../domain/email-csv.ts';
import { insightsOf } from '../use-cases/email-insights.ts';
import type { DmarcLookup } from '../dns/dmarc.ts';
import { cancelScheduledEmail, rescheduleEmail } from '../use-cases/schedule-emails.ts';

export type EmailRouteDeps = {
  db: Kysely<SenderDb>;
  /** Whether a From domain publishes DMARC, for an email's insights. */
  dmarc: DmarcLookup;
  now: () => Date;
  accepted: Counter<'kind'>;
  /** Accepts single emails in groups (createSingleAccepts). */
  singles: SingleAccepts;
  /** DEV_INBOX: every message stays in the install, so an added domain may send before it is verified. */
  devInbox: boolean;
};

/**
 * `/emails` as in Resend's API reference; the team comes from the gateway's header. POST /emails takes a JSON
 * body, or with `Content-Type: message/rfc822` a raw email and its envelope headers (the SMTP relay's).
 */
export function emailRoutes(deps: EmailRouteDeps): Router {
  const router = Router();
  const rawSlots = createSlots(RAW_EMAIL_BODY.maxConcurrent);
  route(router, '/emails', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      if (req.is(RAW_EMAIL_BODY.type) === RAW_EMAIL_BODY.type) {
        const release = rawBodyNeedsSlot(req.header('content-length')) ? await rawSlots.acquire() : () => undefined;
        try {
          const body = await acceptRawEmail(deps, {
            teamId,
            raw: await readRawBody(req, RAW_EMAIL_BODY),
            envelope: { from: req.header(ENVELOPE_FROM_HEADER), to: req.header(ENVELOPE_TO_HEADER) },
            idempotencyKey: idempotencyKeyOf(req, teamId),
            grant: grantOf(req, deps.devInbox),
            origin: originOf(req),
          });
          deps.accepted.inc({ kind: 'raw' });
          res.json(body);
        } finally {
          release();
        }
        return;
      }
      const body = await acceptEmail(deps, {
        teamId,
        body: req.body,
        idempotencyKey: idempotencyKeyOf(req, teamId),
        grant: grantOf(req, deps.devInbox),
        origin: originOf(req),
      });
      deps.accepted.inc({ kind: 'single' });
      res.json(body);
    },
    get: async (req, res) => {
      const teamId = teamOf(res);
      const query = parseInput(PaginationQuery, req.query);
      const filter = parseInput(ApiRequests.EmailFilterQuery, req.query);
      const page = await pageOfEmails(deps.db, teamId, filter, query);
      res.json({ ...page, data: page.data.map(listItem) });
    },
  });

  route(router, '/emails/batch', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const mode = batchMode(req);
      const items = batchItems(req.body);
      const { answer, accepted } = await acceptBatch(deps, {
        teamId,
        items,
        mode,
        idempotencyKey: idempotencyKeyOf(req, teamId),
        grant: grantOf(req, deps.devInbox),
        origin: originOf(req),
      });
      deps.accepted.inc({ kind: 'batch' }, accepted);
      res.json(answer);
    },
  });

  route(router, '/emails/export', {
    get: async (req, res) => {
      const filter = parseInput(ApiRequests.EmailFilterQuery, req.query);
      const pages = emailsToExport(deps.db, teamOf(res), filter);
      // The first page is read before the answer starts, so that a database failure is still a JSON error.
      const first = await pages.next();
      res.status(200).type('text/csv; charset=utf-8');
      res.setHeader('content-disposition', 'attachment; filename="emails.csv"');
      async function* lines(): AsyncGenerator<string> {
        yield EMAIL_CSV_HEADER;
        if (first.done) return;
        yield first.value.map(emailCsvLine).join('');
        for await (const page of pages) yield page.map(emailCsvLine).join('');
      }
      // Written as the reader takes it; a reader that goes away ends the reading of pages too.
      await pipeline(Readable.from(lines()), res).catch((err: unknown) =>
        req.log.info({ err }, 'email export ended before its last line'),
      );
    },
  });

  route(router, '/emails/metrics', {
    get: async (req, res) => {
      res.json(await emailMetrics(deps, teamOf(res), parseInput(ApiRequests.EmailMetricsQuery, req.query)));
    },
  });

  route(router, '/emails/:id', {
    get: async (req, res) => {
      const email = await getEmail(deps.db, teamOf(res), req.params.id);
      res.json(emailBody(email));
    },
    patch: async (req, res) => {
      const teamId = teamOf(res);
      const id = checkEmailId(req.params.id);
      const body = parseInput(ApiRequests.RescheduleEmailBody, req.body);
      await rescheduleEmail(deps, teamId, id, body.scheduled_at);
      res.json({ object: 'email', id });
    },
  });

  route(router, '/emails/:id/recipients', {
    get: async (req, res) => {
      const recipients = await recipientsOf(deps.db, teamOf(res), req.params.id);
      res.json({
        object: 'list',
        data: recipients.map((r) => ({ ...r, updated_at: formatTimestamp(r.updated_at) })),
      });
    },
  });

  route(router, '/emails/:id/events', {
    get: async (req, res) => {
      const { events, hasMore } = await eventsOf(deps.db, teamOf(res), req.params.id);
      res.json({
        object: 'list',
        has_more: hasMore,
        data: events.map((e) => ({ id: e.id, type: e.type, created_at: formatTimestamp(e.occurred_at), data: e.data })),
      });
    },
  });

  route(router, '/emails/:id/insights', {
    get: async (req, res) => {
      res.json({ object: 'list', data: await insightsOf(deps, teamOf(res), req.params.id) });
    },
  });

  route(router, '/emails/:id/cancel', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const id = checkEmailId(req.params.id);
      await cancelScheduledEmail(deps, teamId, id);
      res.json({ object: 'email', id });
    },
  });
  return router;
}

/** The request's idempotency key and the gateway's hash of the request, when it came with one. */
function idempotencyKeyOf(req: Request, teamId: string): IdempotencyKey | undefined {
  const key = req.header(IDEMPOTENCY_HEADER);
  if (key === undefined) return undefined;
  const requestHash = req.header(IDEMPOTENCY_HASH_HEADER);
  return requestHash === undefined ? { teamId, key } : { teamId, key, requestHash };
}

/**
 * The emails of a batch body, refused unless the documented schema (ApiRequests.BatchEmailsBody) takes the
 * list itself; each email is checked on its own (acceptBatch), as a permissive batch accepts the valid ones.
 */
function batchItems(body: unknown): unknown[] {
  const parsed = ApiRequests.BatchEmailsBody.safeParse(body);
  const refused = parsed.success ? undefined : parsed.error.issues.find((issue) => issue.path.length === 0);
  if (refused) throw validationError(refused.message);
  return body as unknown[];
}

function batchMode(req: Request): BatchMode {
  const value = (req.header('x-batch-validation') ?? req.header('x-resend-batch-validation') ?? 'strict').toLowerCase();
  if (value !== 'strict' && value !== 'permissive') {
    throw validationError('The `x-batch-validation` header must be `strict` or `permissive`.');
  }
  return value;
}

/** The API key and the gateway's request log the gateway names (a dashboard session has no key). */
function originOf(req: Request): RequestOrigin {
  const uuid = (name: string) => {
    const value = req.header(name);
    return value && isUuid(value) ? value : null;
  };
  return { apiKeyId: uuid(KEY_HEADER), requestId: uuid(REQUEST_LOG_HEADER) };
}

/** What the request may send besides the team's verified domains: the key's domain, the team's members. */
function grantOf(req: Request, devInbox: boolean): SendGrant {
  const keyDomain = req.header(KEY_DOMAIN_HEADER);
  const members = (req.header(TEAM_MEMBERS_HEADER) ?? '')
    .split(',')
    .map((address) => address.trim().toLowerCase())
    .filter((address) => address.length > 0);
  return { keyDomainId: keyDomain && isUuid(keyDomain) ? keyDomain : undefined, members, devInbox };
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
    topic_id: email.topic_id,
  };
}

function emailBody(email: EmailRow) {
  return {
    object: 'email',
    ...listItem(email),
    html: email.html,
    text: email.text,
    tags: (email.tags as unknown as Tag[]).map((tag) => ({ name: tag.name, value: tag.value })),
    // Postline's: which API key sent it and the log of that request (GET /logs/{id}); null for a broadcast's.
    api_key_id: email.api_key_id,
    request_id: email.request_id,
  };
}
