// Logs: the team's API requests (GET /logs), newest first, filtered by status, method, endpoint, API key,
// user agent and time (kept in the URL), each opening its entry with the request and response bodies.
import { Link, Route, Routes } from 'react-router';
import type { ApiShape } from '@postline/contracts';
import { useIsAdmin } from '../../session.tsx';
import { EmptyState } from '../../ui/feedback.tsx';
import { ListTable, Pager, useFilters, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import { LogEntry } from './entry.tsx';
import { LogFilters, FILTER_NAMES } from './filters.tsx';
import { MadeBy, ResponseStatus } from './parts.tsx';
import { RetentionNote } from '../../ui/retention.tsx';

type LogItem = ApiShape<'LogList'>['data'][number];

export default function Logs() {
  return (
    <Routes>
      <Route index element={<LogList />} />
      <Route path=":id" element={<LogEntry />} />
    </Routes>
  );
}

function LogList() {
  const isAdmin = useIsAdmin();
  const [filters] = useFilters();
  const query = Object.fromEntries(FILTER_NAMES.map((name) => [name, filters[name]]));
  const page = useListPage<LogItem>('logs', '/logs', query);
  const filtered = FILTER_NAMES.some((name) => filters[name]);
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Logs</h1>
          <p className="muted">
            Every request made to the API with this team’s keys or from this dashboard.
            <RetentionNote what="Logs" />
          </p>
        </div>
      </div>
      <LogFilters shown={page.data?.data ?? []} isAdmin={isAdmin} />
      <ListTable
        query={page}
        caption="Requests"
        columns={['Request', 'Status', 'Made by', 'User agent', 'When']}
        empty={
          <EmptyState title={filtered ? 'No request matches these filters' : 'No requests yet'}>
            <p>
              {filtered
                ? 'Widen the time range or clear the filters.'
                : 'Requests made with an API key (sending an email, adding a domain) are listed here.'}
            </p>
          </EmptyState>
        }
        row={(log) => (
          <tr key={log.id}>
            <th scope="row">
              <Link to={`/logs/${log.id}`}>
                {log.method} {log.endpoint}
              </Link>
            </th>
            <td>
              <ResponseStatus status={log.response_status} />
            </td>
            <td>
              <MadeBy log={log} isAdmin={isAdmin} />
            </td>
            <td className="truncate" title={log.user_agent ?? ''}>
              {log.user_agent ?? <span className="muted">—</span>}
            </td>
            <td>
              <Time value={log.created_at} stacked />
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}
