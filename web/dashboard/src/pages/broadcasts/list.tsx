// The team's broadcasts, newest first, by status (the tab in the URL), each opening its page; and, for an
// admin, the team's approval setting.
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import type { ApiRequest } from '@postline/contracts';
import { patch } from '../../api/client.ts';
import { useIsAdmin } from '../../session.tsx';
import { EmptyState, ErrorMessage, Loading, StatusBadge } from '../../ui/feedback.tsx';
import { Pager, useListPage } from '../../ui/list.tsx';
import { Time } from '../../ui/time.tsx';
import {
  BROADCASTS,
  STATUS_LABELS,
  useBroadcastSettings,
  type BroadcastItem,
  type BroadcastStatus,
} from './queries.ts';

const TABS: ('all' | BroadcastStatus)[] = [
  'all',
  'draft',
  'awaiting_approval',
  'scheduled',
  'queued',
  'sent',
  'canceled',
];

export function BroadcastList() {
  const [params, setParams] = useSearchParams();
  const tab = (TABS as string[]).includes(params.get('status') ?? '')
    ? (params.get('status') as BroadcastStatus)
    : 'all';
  const list = useListPage<BroadcastItem>(BROADCASTS, '/broadcasts', { status: tab === 'all' ? undefined : tab });
  const shown = list.data?.data ?? [];
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Broadcasts</h1>
          <p className="muted">
            One message to a segment&apos;s contacts, each personalised, with their own unsubscribe link.
          </p>
        </div>
        <Link to="/broadcasts/new" className="button primary">
          New broadcast
        </Link>
      </div>
      <ApprovalSetting />
      <nav aria-label="Broadcast status" className="subnav">
        <ul>
          {TABS.map((t) => (
            <li key={t}>
              <Link
                to={t === 'all' ? '/broadcasts' : `/broadcasts?status=${t}`}
                className={t === tab ? 'active' : undefined}
                aria-current={t === tab ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  setParams(t === 'all' ? {} : { status: t });
                }}
              >
                {t === 'all' ? 'All' : STATUS_LABELS[t]}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <ErrorMessage error={list.error} />
      {list.isPending ? <Loading /> : null}
      {list.data && shown.length === 0 ? (
        <EmptyState title={tab === 'all' ? 'No broadcasts yet' : `No broadcasts ${STATUS_LABELS[tab].toLowerCase()}`}>
          <p>Write one from HTML or from a template, review it, and send it to a segment.</p>
        </EmptyState>
      ) : null}
      {shown.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Broadcasts</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Scheduled</th>
                <th scope="col">Sent</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((b) => (
                <Row key={b.id} broadcast={b} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Pager page={list.data} after={list.after} before={list.before} />
    </>
  );
}

function Row({ broadcast: b }: { broadcast: BroadcastItem }) {
  return (
    <tr>
      <th scope="row" className="break-anywhere">
        <Link to={`/broadcasts/${b.id}`}>{b.name || 'Untitled broadcast'}</Link>
      </th>
      <td>
        <StatusBadge status={STATUS_LABELS[b.status].toLowerCase()} />
      </td>
      <td>{b.scheduled_at ? <Time value={b.scheduled_at} stacked /> : '—'}</td>
      <td>{b.sent_at ? <Time value={b.sent_at} stacked /> : '—'}</td>
      <td>
        <Time value={b.created_at} stacked />
      </td>
    </tr>
  );
}

/** The team's rule that a member's broadcast waits for an admin; admins change it, members read it. */
function ApprovalSetting() {
  const isAdmin = useIsAdmin();
  const settings = useBroadcastSettings();
  const client = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  if (!settings.data) return <ErrorMessage error={settings.error} />;
  const required = settings.data.require_approval;
  if (!isAdmin) {
    return required ? (
      <p className="muted">Your team requires an admin&apos;s approval before a member&apos;s broadcast is sent.</p>
    ) : null;
  }
  return (
    <div className="field">
      <label>
        <input
          type="checkbox"
          checked={required}
          onChange={(e) => {
            setError(null);
            patch('/broadcasts/settings', {
              require_approval: e.target.checked,
            } satisfies ApiRequest<'UpdateBroadcastSettingsBody'>).then(
              () => client.invalidateQueries({ queryKey: [BROADCASTS, 'settings'] }),
              (err: unknown) => setError(err),
            );
          }}
        />{' '}
        Members&apos; broadcasts wait for an admin&apos;s approval
      </label>
      <ErrorMessage error={error} />
    </div>
  );
}
