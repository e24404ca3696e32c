// The team: its settings (rate limit, access, data retention), its members and their roles, and its open invites. Members
// and invites are the admins' business, as in Resend: a member sees the team read-only and the API's word
// on the rest. Sign-in sessions are the person's own, on Your account.
import { Link } from 'react-router';
import type { DashboardShape } from '@postline/contracts';
import { useIsAdmin } from '../session.tsx';
import { Badge, ErrorMessage, Loading } from '../ui/feedback.tsx';
import { retentionText, useTeam } from '../ui/retention.tsx';
import { Time } from '../ui/time.tsx';
import { Invites } from './team/invites.tsx';
import { Members } from './team/members.tsx';

export default function Team() {
  const isAdmin = useIsAdmin();
  const team = useTeam();
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Team</h1>
          <p className="muted">
            {team.data ? team.data.name : null} · Your sign-in sessions and password are on{' '}
            <Link to="/account">Your account</Link>.
          </p>
        </div>
      </div>
      <ErrorMessage error={team.error} />
      {team.isPending ? <Loading /> : null}
      {team.data ? <Settings team={team.data} /> : null}
      <Members />
      {isAdmin ? <Invites /> : null}
    </>
  );
}

function Settings({ team }: { team: DashboardShape<'DashboardTeam'> }) {
  return (
    <section aria-labelledby="settings-title" className="section card">
      <h2 id="settings-title" style={{ marginTop: 0 }}>
        Settings
      </h2>
      <dl className="facts">
        <dt>Name</dt>
        <dd>{team.name}</dd>
        <dt>Your role</dt>
        <dd>{team.role === 'admin' ? 'Admin' : 'Member'}</dd>
        <dt>API access</dt>
        <dd>
          {team.access_enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="bad">disabled</Badge>}{' '}
          <span className="muted small-text">(the operator turns it on and off with the admin CLI)</span>
        </dd>
        <dt>Rate limit</dt>
        <dd>
          {team.rate_limit_per_second === null
            ? 'The server’s default'
            : `${team.rate_limit_per_second} requests per second`}
        </dd>
        <dt>Data retention</dt>
        <dd>
          {retentionText(team.retention_days)}{' '}
          <span className="muted small-text">
            (emails, received mail, logs and webhook events older than this are deleted; the operator sets it with the
            admin CLI)
          </span>
        </dd>
        <dt>Created</dt>
        <dd>
          <Time value={team.created_at} />
        </dd>
      </dl>
    </section>
  );
}
