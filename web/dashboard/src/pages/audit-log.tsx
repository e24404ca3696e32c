// The audit log: every change made to the team, newest first, with who made it (a person or an API key),
// what, on which record (linked to its page when it has one), from where and when; filtered by family or
// action, actor and target, the filters kept in the URL.
import { Link } from 'react-router';
import type { DashboardShape } from '@postline/contracts';
import { useApiKeyNames, useMembers } from '../api/people.ts';
import { useIsAdmin } from '../session.tsx';
import { Badge, EmptyState } from '../ui/feedback.tsx';
import { ListTable, Pager, useFilters, useListPage } from '../ui/list.tsx';
import { Time } from '../ui/time.tsx';
import { AuditFilters, type Actor } from './audit-log/filters.tsx';

type Entry = DashboardShape<'AuditLogList'>['data'][number];

export default function AuditLog() {
  const isAdmin = useIsAdmin();
  const [filters] = useFilters();
  const page = useListPage<Entry>('audit-log', '/dashboard-api/audit-log', {
    action: filters.action,
    actor_id: filters.actor_id,
    target_id: filters.target_id,
  });
  const actors = useActors(isAdmin, page.data?.data ?? []);
  const names = new Map(actors.map((a) => [a.id, a.label]));
  const filtered = Boolean(filters.action || filters.actor_id || filters.target_id);
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Audit log</h1>
          <p className="muted">Every change made to this team, by a person or an API key. Sending is in Logs.</p>
        </div>
      </div>
      <AuditFilters actors={actors} />
      <ListTable
        query={page}
        caption="Audit log"
        columns={['When', 'Who', 'What', 'Target', 'From where']}
        empty={
          <EmptyState title={filtered ? 'No change matches these filters' : 'No changes yet'}>
            <p>
              {filtered
                ? 'Try another family or actor, or clear the filters.'
                : 'Creating a key, a domain or a webhook, or inviting someone, is recorded here.'}
            </p>
          </EmptyState>
        }
        row={(entry) => (
          <tr key={entry.id}>
            <td>
              <Time value={entry.created_at} stacked />
            </td>
            <td className="break-anywhere">
              <Who entry={entry} isAdmin={isAdmin} />
            </td>
            <th scope="row">
              <code>{entry.action}</code>
              <div className="muted small-text break-anywhere" style={{ fontWeight: 'normal' }}>
                {entry.method} {entry.endpoint}
              </div>
            </th>
            <td>
              <Target entry={entry} names={names} />
            </td>
            <td>
              {entry.ip ?? '—'}
              <div className="muted small-text truncate short" title={entry.user_agent ?? ''}>
                {entry.user_agent ?? ''}
              </div>
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </>
  );
}

function Who({ entry, isAdmin }: { entry: Entry; isAdmin: boolean }) {
  if (entry.actor.type === 'user') return <>{entry.actor.email ?? <span className="muted">a removed person</span>}</>;
  const name = entry.actor.name ?? 'a deleted key';
  return (
    <>
      <Badge>API key</Badge> {isAdmin && entry.actor.name ? <Link to="/api-keys">{name}</Link> : name}
    </>
  );
}

/** The page of the changed record, when the dashboard has one. */
function targetPath(type: string, id: string): string | null {
  if (type === 'domains') return `/domains/${id}`;
  if (type === 'webhooks') return `/webhooks/${id}`;
  if (type === 'api-keys') return '/api-keys';
  if (type === 'members' || type === 'invites') return '/team';
  return null;
}

function Target({ entry, names }: { entry: Entry; names: Map<string, string> }) {
  const { type, id } = entry.target;
  if (!id) return <span className="muted">{type}</span>;
  const path = targetPath(type, id);
  // A person or a key the team still has is named; anything else shows its id.
  const name = names.get(id);
  const shown = name ? <span title={id}>{name}</span> : <code>{id}</code>;
  return (
    <>
      <span className="muted small-text">{type}</span>
      <div className="truncate short">
        {path ? (
          <Link to={path} aria-label={`${type}: ${name ?? id}`}>
            {shown}
          </Link>
        ) : (
          shown
        )}
      </div>
    </>
  );
}

/** Who may be picked as the actor: the team's people and keys (admins see those lists), and whoever is shown. */
function useActors(isAdmin: boolean, shown: Entry[]): Actor[] {
  const members = useMembers({ enabled: isAdmin });
  const keys = useApiKeyNames({ enabled: isAdmin });
  const actors = new Map<string, Actor>();
  for (const m of members.data?.data ?? []) actors.set(m.id, { id: m.id, label: m.email });
  for (const k of keys.data?.data ?? []) actors.set(k.id, { id: k.id, label: `API key: ${k.name}` });
  for (const { actor } of shown) {
    if (actors.has(actor.id)) continue;
    const label = actor.type === 'user' ? (actor.email ?? actor.id) : `API key: ${actor.name ?? actor.id}`;
    actors.set(actor.id, { id: actor.id, label });
  }
  return [...actors.values()];
}
