import { Router } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { countKeptMessages, deleteKeptMessages, pageOfKeptMessages, type KeptMessageItem } from '../db/messages.ts';
import { getKeptMessage, readKeptMessage } from '../use-cases/read-messages.ts';

/** `/dev-inbox` (Postline's own): the messages the MTA kept in the install instead of sending them. */
export function devInboxRoutes(deps: { db: Kysely<SenderDb>; devInbox: boolean }): Router {
  const router = Router();
  route(router, '/dev-inbox', {
    get: async (_req, res) => {
      const count = await countKeptMessages(deps.db, teamOf(res));
      res.json({ object: 'dev_inbox', enabled: deps.devInbox, count });
    },
  });
  route(router, '/dev-inbox/messages', {
    get: async (req, res) => {
      const page = parseInput(PaginationQuery, req.query);
      const filter = parseInput(ApiRequests.DevInboxQuery, req.query);
      const found = await pageOfKeptMessages(deps.db, teamOf(res), filter, page);
      res.json({ ...found, data: found.data.map(itemOf) });
    },
    delete: async (_req, res) => {
      res.json({ object: 'dev_inbox', deleted: await deleteKeptMessages(deps.db, teamOf(res)) });
    },
  });
  route(router, '/dev-inbox/messages/:id', {
    get: async (req, res) => {
      const { envelope_from, headers, html, text, attachments, ...item } = await readKeptMessage(
        deps.db,
        teamOf(res),
        req.params.id,
      );
      res.json({
        object: 'dev_inbox_message',
        ...itemOf(item),
        envelope_from,
        headers,
        html,
        text,
        attachments,
      });
    },
    delete: async (req, res) => {
      const { id } = await getKeptMessage(deps.db, teamOf(res), req.params.id);
      await deleteKeptMessages(deps.db, teamOf(res), id);
      res.json({ object: 'dev_inbox_message', id, deleted: true });
    },
  });
  route(router, '/dev-inbox/messages/:id/raw', {
    get: async (req, res) => {
      const { id, raw } = await getKeptMessage(deps.db, teamOf(res), req.params.id);
      res.type('message/rfc822').set('content-disposition', `attachment; filename="${id}.eml"`).send(raw);
    },
  });
  return router;
}

function itemOf(message: KeptMessageItem) {
  return {
    id: message.id,
    email_id: message.email_id,
    from: message.from_header,
    to: message.recipients,
    subject: message.subject,
    size: message.size,
    created_at: formatTimestamp(message.kept_at),
  };
}
