// What the stores must hold after a session: the MX's received and return-path mail, the relay's emails.
import type { SmtpTarget } from './session.ts';

/** Runs one SQL query (a pg Pool's query, rows only). */
export type Query = <Row>(text: string, values: unknown[]) => Promise<Row[]>;

/** The index of the first CR or LF that is not part of a CRLF, or -1. */
export function bareLineEnd(raw: Buffer): number {
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0x0d && raw[i + 1] === 0x0a) i++;
    else if (raw[i] === 0x0d || raw[i] === 0x0a) return i;
  }
  return -1;
}

const EMAIL_ID = /queued as ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/;

/**
 * The per-session store checks of one team. MX: the received emails from the session's address are exactly
 * its messages answered 250 with a recipient at the receiving domain (no second message out of one DATA),
 * and mail is recorded at the return-path domain only for messages answered 250 with a recipient there
 * (once per recipient and distinct message at most). Relay: the sender's emails with the session's tag in
 * their subject are exactly the ones its 250s name. Each stored with CRLF line ends only. `totals` counts
 * the messages answered 250 of every session checked.
 */
export function createStoreChecks(
  query: Query,
  teamId: string,
): { verifyStored: SmtpTarget['verifyStored']; totals: { mx: number; relay: number } } {
  const totals = { mx: 0, relay: 0 };
  return {
    totals,
    async verifyStored({ listener, tag, address, accepted }) {
      const problems: string[] = [];
      if (listener === 'mx') {
        // smtp-server reports an IPv4 client as such; the IPv4-mapped form is counted too.
        const addresses = [address, `::ffff:${address}`];
        const received = accepted.filter((message) => message.receiving > 0).length;
        totals.mx += received;
        const rows = await query<{ id: string; content: Buffer }>(
          `select e.id, r.content from inbound_smtp.received_emails e
           join inbound_smtp.received_raw_messages r on r.id = e.raw_id
           where e.team_id = $1 and e.remote_address = any($2)`,
          [teamId, addresses],
        );
        if (rows.length !== received)
          problems.push(
            `${received} DATA answered 250 for the receiving domain but ${rows.length} received emails stored`,
          );
        for (const row of rows) {
          const at = bareLineEnd(row.content);
          if (at >= 0) problems.push(`received email ${row.id} stored with a bare CR/LF at byte ${at}`);
        }
        const returnPath = accepted.filter((message) => message.returnPath > 0);
        const most = returnPath.reduce((sum, message) => sum + message.returnPath, 0);
        const recorded = await query<{ count: string }>(
          'select count(*) from inbound_smtp.return_path_mail where team_id = $1 and remote_address = any($2)',
          [teamId, addresses],
        );
        const count = Number(recorded[0]?.count ?? 0);
        if (count > most || (returnPath.length > 0 && count === 0))
          problems.push(
            `${returnPath.length} DATA answered 250 for the return path (${most} recipients) but ${count} recorded`,
          );
        return problems;
      }
      totals.relay += accepted.length;
      const rows = await query<{ id: string; mime: Buffer | null }>(
        `select e.id, r.mime from sender.emails e left join sender.raw_emails r on r.email_id = e.id
         where e.team_id = $1 and e.subject like $2`,
        [teamId, `%${tag}%`],
      );
      if (rows.length !== accepted.length)
        problems.push(`${accepted.length} DATA answered 250 but the sender stored ${rows.length} emails`);
      for (const { reply } of accepted) {
        const id = EMAIL_ID.exec(reply.lines.join(' '))?.[1];
        if (!id) problems.push(`a 250 to DATA without the email's id: ${reply.lines.join(' ')}`);
        else if (!rows.some((row) => row.id === id))
          problems.push(`250 names email ${id}, which the sender does not have`);
      }
      for (const row of rows) {
        const at = row.mime ? bareLineEnd(row.mime) : -1;
        if (!row.mime) problems.push(`email ${row.id} has no raw MIME`);
        else if (at >= 0) problems.push(`email ${row.id} relayed with a bare CR/LF at byte ${at}`);
      }
      return problems;
    },
  };
}
