// Pieces the request list and an entry share: the status badge, who made the request.
import { Link } from 'react-router';
import type { ApiShape } from '@postline/contracts';
import { Badge, type BadgeTone } from '../../ui/feedback.tsx';

type LogItem = ApiShape<'LogList'>['data'][number];

export function ResponseStatus({ status }: { status: number }) {
  const tone: BadgeTone =
    status >= 500 ? 'bad' : status >= 400 ? 'warn' : status >= 200 && status < 300 ? 'good' : 'neutral';
  return <Badge tone={tone}>{status}</Badge>;
}

/** The API key (its requests, and the keys page for admins) or the person who made the request. */
export function MadeBy({ log, isAdmin, detailed = false }: { log: LogItem; isAdmin: boolean; detailed?: boolean }) {
  if (log.user) return <>{log.user.email ?? <span className="muted">a removed person</span>}</>;
  if (!log.api_key) return <span className="muted">—</span>;
  const name = log.api_key.name ?? 'a deleted key';
  return (
    <>
      <Badge>API key</Badge> {isAdmin && log.api_key.name ? <Link to="/api-keys">{name}</Link> : name}
      {detailed ? (
        <div className="small-text">
          <Link to={`/logs?api_key_id=${log.api_key.id}`}>Every request made with this key</Link>
        </div>
      ) : null}
    </>
  );
}
