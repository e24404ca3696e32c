// One request of the log: what was asked, who asked, what was answered (both bodies as indented JSON), and
// the record it created, linked to its page when the dashboard has one.
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import type { ApiShape } from '@postline/contracts';
import { get } from '../../api/client.ts';
import { useIsAdmin } from '../../session.tsx';
import { CodeValue } from '../../ui/copy.tsx';
import { ErrorMessage, Loading } from '../../ui/feedback.tsx';
import { Time } from '../../ui/time.tsx';
import { MadeBy, ResponseStatus } from './parts.tsx';

type Log = ApiShape<'Log'>;

export function LogEntry() {
  const { id = '' } = useParams();
  const isAdmin = useIsAdmin();
  const log = useQuery({ queryKey: ['logs', id], queryFn: () => get<Log>(`/logs/${id}`), retry: false });
  return (
    <>
      <p>
        <Link to="/logs">← Logs</Link>
      </p>
      <ErrorMessage error={log.error} />
      {log.isPending ? <Loading /> : null}
      {log.data ? (
        <>
          <div className="page-header">
            <div>
              <h1>
                {log.data.method} {log.data.endpoint}
              </h1>
              <p className="muted">
                <Time value={log.data.created_at} />
              </p>
            </div>
          </div>
          <section aria-labelledby="request-facts" className="card">
            <h2 id="request-facts" style={{ marginTop: 0 }}>
              Request
            </h2>
            <dl className="facts">
              <dt>Status</dt>
              <dd>
                <ResponseStatus status={log.data.response_status} />
              </dd>
              <dt>Made by</dt>
              <dd>
                <MadeBy log={log.data} isAdmin={isAdmin} detailed />
              </dd>
              <dt>User agent</dt>
              <dd>{log.data.user_agent ?? <span className="muted">—</span>}</dd>
              <dt>Log id</dt>
              <dd>
                <code>{log.data.id}</code>
              </dd>
            </dl>
            <Created log={log.data} />
          </section>
          <Body title="Request body" body={log.data.request_body} />
          <Body title="Response body" body={log.data.response_body} />
        </>
      ) : null}
    </>
  );
}

function Body({ title, body }: { title: string; body: unknown }) {
  const id = title.toLowerCase().replace(' ', '-');
  return (
    <section aria-labelledby={id} className="section">
      <h2 id={id}>{title}</h2>
      {body === null || body === undefined ? (
        <p className="muted">No body.</p>
      ) : (
        <pre className="block" tabIndex={0} aria-labelledby={id}>
          {JSON.stringify(body, null, 2)}
        </pre>
      )}
    </section>
  );
}

function idOf(value: unknown): string | null {
  if (value && typeof value === 'object' && 'id' in value && typeof value.id === 'string') return value.id;
  return null;
}

/** The records a successful POST created: emails (their page comes later: the id, to copy), domains, webhooks. */
function Created({ log }: { log: Log }) {
  if (log.method !== 'POST' || log.response_status < 200 || log.response_status >= 300) return null;
  const body = log.response_body;
  if (log.endpoint === '/emails' || log.endpoint === '/emails/batch') {
    const data = body && typeof body === 'object' && 'data' in body && Array.isArray(body.data) ? body.data : [body];
    const ids = data.map(idOf).filter((v): v is string => v !== null);
    if (ids.length === 0) return null;
    return (
      <div className="section">
        <h3>{ids.length === 1 ? 'Email created' : `${ids.length} emails created`}</h3>
        {ids.map((emailId) => (
          <CodeValue key={emailId} value={emailId} label={`Copy the email id ${emailId}`} />
        ))}
      </div>
    );
  }
  const id = idOf(body);
  const page = log.endpoint === '/domains' ? 'domains' : log.endpoint === '/webhooks' ? 'webhooks' : null;
  if (!id || !page) return null;
  return (
    <div className="section">
      <h3>Created</h3>
      <Link to={`/${page}/${id}`}>
        The {page === 'domains' ? 'domain' : 'webhook'} <code>{id}</code>
      </Link>
    </div>
  );
}
