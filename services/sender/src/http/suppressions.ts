import { Router } from 'express';
import type { ExpressionBuilder, Kysely } from 'kysely';
import { z } from 'zod';
import { PaginationQuery, SuppressionOrigin } from '@postline/contracts';
import { formatTimestamp, isUuid, notFound, paginate, parseInput, route, teamOf, validationError } from '@postline/platform';
import type { SenderDb, SuppressionRow } from '../db/schema.ts';
import { bareAddress } from '../domain/recipients.ts';
import { addSuppressions, removeSuppressions } from '../suppress.ts';

export type SuppressionRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

const MAX_BATCH = 100;
// Deliberately plain: the list holds what mail servers refused, so it only has to be a mailbox shape.
const Email = z
  .string()
  .trim()
  .max(320)
  .regex(/^[^\s@<>()[\],;:"\\]+@[^\s@<>()[\],;:"\\]+\.[^\s@<>()[\],;:"\\]+$/, 'must be an email address')
  // As recipients are kept: an internationalised domain in punycode, so `u@bücher.de` matches a send to it.
  .transform(listedAddress);

const AddBody = z.object({ email: Email });
const BatchAddBody = z.object({ emails: z.array(Email).min(1).max(MAX_BATCH) });
const BatchRemoveBody = z
  .object({ emails: z.array(Email).min(1).max(MAX_BATCH).nullish(), ids: z.array(z.string()).min(1).max(MAX_BATCH).nullish() })
  .refine((b) => (b.emails ? 1 : 0) + (b.ids ? 1 : 0) === 1, 'Give either `emails` or `ids`.');
const ListQuery = z.object({ origin: SuppressionOrigin.optional() });

/** `/suppressions` as in API-REFERENCE.md §5: the team's account-level suppression list. */
export function suppressionRoutes(deps: SuppressionRouteDeps): Router {
  const router = Router();
  route(router, '/suppressions', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const body = parseInput(AddBody, req.body);
      const [row] = await deps.db
        .transaction()
        .execute((trx) => addSuppressions(trx, teamId, [{ email: body.email, origin: 'manual', sourceId: null }], deps.now()));
      res.status(201).json({ object: 'suppression', id: (row as SuppressionRow).id });
    },
    get: async (req, res) => {
      const teamId = teamOf(res);
      const page = parseInput(PaginationQuery, req.query);
      const { origin } = parseInput(ListQuery, { origin: req.query.origin });
      let qb = deps.db.selectFrom('suppressions').selectAll().where('team_id', '=', teamId).where(active(deps.now()));
      if (origin) qb = qb.where('origin', '=', origin);
      const result = await paginate(qb, page);
      res.json({ ...result, data: result.data.map(item) });
    },
  });

  route(router, '/suppressions/batch/add', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const body = parseInput(BatchAddBody, req.body);
      const rows = await deps.db
        .transaction()
        .execute((trx) =>
          addSuppressions(trx, teamId, body.emails.map((email) => ({ email, origin: 'manual' as const, sourceId: null })), deps.now()),
        );
      res.status(201).json({ data: rows.map((row) => ({ object: 'suppression', id: row.id })) });
    },
  });

  route(router, '/suppressions/batch/remove', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const body = parseInput(BatchRemoveBody, req.body);
      const data = await deps.db.transaction().execute(async (trx) => {
        // Ids and addresses compare without case; each is answered once, in the order first asked.
        const wanted = [...new Set((body.ids ?? body.emails ?? []).map((k) => k.toLowerCase()))];
        // Ids that are not UUIDs name nothing; they are reported as not deleted.
        const lookup = body.ids ? wanted.filter(isUuid) : wanted;
        const found =
          lookup.length === 0
            ? []
            : await trx
                .selectFrom('suppressions')
                .selectAll()
                .where('team_id', '=', teamId)
                .where(body.ids ? 'id' : 'email', 'in', lookup)
                // An expired temporary entry is no longer listed (GET answers 404): it is not deleted here either.
                .where(active(deps.now()))
                .execute();
        const removed = new Set((await removeSuppressions(trx, teamId, found.map((r) => r.id))).map((r) => r.id));
        const byKey = new Map(found.map((row) => [body.ids ? row.id.toLowerCase() : row.email, row]));
        return wanted.map((key) => {
          const row = byKey.get(key);
          return { object: 'suppression', id: row?.id ?? (body.ids ? key : null), deleted: row !== undefined && removed.has(row.id) };
        });
      });
      res.json({ data });
    },
  });

  route(router, '/suppressions/:key', {
    get: async (req, res) => {
      const row = await findSuppression(deps.db, teamOf(res), req.params.key, deps.now());
      if (!row) throw notFound('Suppression not found');
      res.json({ object: 'suppression', ...item(row) });
    },
    delete: async (req, res) => {
      const teamId = teamOf(res);
      const removed = await deps.db.transaction().execute(async (trx) => {
        const row = await findSuppression(trx, teamId, req.params.key, deps.now());
        if (!row) throw notFound('Suppression not found');
        return removeSuppressions(trx, teamId, [row.id]);
      });
      res.json({ object: 'suppression', id: (removed[0] as SuppressionRow).id, deleted: true });
    },
  });
  return router;
}

/** By id, or by address (the SDKs send an address raw in the path). */
async function findSuppression(db: Kysely<SenderDb>, teamId: string, key: string | undefined, now: Date) {
  if (!key) return undefined;
  const byId = isUuid(key);
  if (!byId && !key.includes('@')) throw validationError('The suppression must be named by its id or its email address.');
  return db
    .selectFrom('suppressions')
    .selectAll()
    .where('team_id', '=', teamId)
    .where(byId ? 'id' : 'email', '=', byId ? key : listedAddress(key))
    .where(active(now))
    .executeTakeFirst();
}

/** An address as the list keeps it: lower case, its domain in punycode. */
function listedAddress(address: string): string {
  return bareAddress(address).toLowerCase();
}

/** A suppression still in force: permanent, or temporary and not yet expired. */
function active(now: Date) {
  return (eb: ExpressionBuilder<SenderDb, 'suppressions'>) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]);
}

function item(row: SuppressionRow) {
  return { id: row.id, email: row.email, origin: row.origin, source_id: row.source_id, created_at: formatTimestamp(row.created_at) };
}
