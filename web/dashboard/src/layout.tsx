// The signed-in frame of every page: the navigation, the team switcher, the account menu, and banners when
// the team's access is off, when the reputation guard has paused its sending, when a webhook endpoint was
// disabled by its failures and when the development inbox is on. On a phone-width screen the navigation folds
// behind a Menu button.
import { useState, type ReactNode } from 'react';
import { Link, NavLink, useNavigate } from 'react-router';
import { useDevInbox } from './pages/dev-inbox-status.ts';
import { DisabledWebhooksBanner } from './pages/webhooks/disabled-banner.tsx';
import { ReputationBanner } from './pages/reputation-banner.tsx';
import { useSession, useSignOut, useSwitchTeam } from './session.tsx';
import { ErrorMessage } from './ui/feedback.tsx';

type NavItem = { to: string; label: string; adminOnly?: boolean };

/** The pages, in the order the navigation lists them. */
export const NAV: NavItem[] = [
  { to: '/emails', label: 'Emails' },
  { to: '/received', label: 'Received' },
  { to: '/dev-inbox', label: 'Dev inbox' },
  { to: '/metrics', label: 'Metrics' },
  { to: '/deliverability', label: 'Deliverability' },
  { to: '/audience', label: 'Audience' },
  { to: '/templates', label: 'Templates' },
  { to: '/broadcasts', label: 'Broadcasts' },
  { to: '/api-keys', label: 'API keys', adminOnly: true },
  { to: '/domains', label: 'Domains' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/suppressions', label: 'Suppressions' },
  { to: '/logs', label: 'Logs' },
  { to: '/audit-log', label: 'Audit log' },
  { to: '/team', label: 'Team' },
];

export function Layout({ children }: { children: ReactNode }) {
  const session = useSession();
  const [menuOpen, setMenuOpen] = useState(false);
  const isAdmin = session.team?.role === 'admin';
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Postline</span>
        <button
          type="button"
          className="button small menu-button"
          aria-expanded={menuOpen}
          aria-controls="primary-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <TeamSwitcher />
        <AccountMenu />
      </header>
      <div className="frame">
        <nav id="primary-nav" aria-label="Main" className={menuOpen ? 'sidebar open' : 'sidebar'}>
          <ul>
            {NAV.filter((item) => isAdmin || !item.adminOnly).map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} onClick={() => setMenuOpen(false)}>
                  {item.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          {session.team && !session.team.access_enabled ? (
            <div role="alert" className="alert alert-error">
              <strong>This team&apos;s access is turned off.</strong> Its API keys and this dashboard are refused until
              the operator turns it on again (<code>npm run admin -- team enable</code>).
            </div>
          ) : null}
          <ReputationBanner />
          <DevInboxBanner />
          <DisabledWebhooksBanner />
          {children}
        </main>
      </div>
    </div>
  );
}

/** On every page while DEV_INBOX is on: nothing sent from this install reaches anyone. */
function DevInboxBanner() {
  const inbox = useDevInbox();
  if (!inbox.data?.enabled) return null;
  return (
    <div role="status" className="alert alert-warning dev-inbox-banner">
      <strong>Development inbox on.</strong> No email leaves this install: every message is kept in the{' '}
      <Link to="/dev-inbox">Dev inbox</Link> instead of going to its recipients (the operator&apos;s DEV_INBOX setting).
    </div>
  );
}

function TeamSwitcher() {
  const session = useSession();
  const switchTeam = useSwitchTeam();
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>(null);
  if (session.teams.length < 2) return <span className="team-name">{session.team?.name}</span>;
  return (
    <div className="team-switcher">
      <label htmlFor="team-switcher" className="visually-hidden">
        Team
      </label>
      <select
        id="team-switcher"
        value={session.team?.id ?? ''}
        onChange={(e) => {
          setError(null);
          switchTeam(e.target.value).then(
            () => void navigate('/'),
            (err: unknown) => setError(err),
          );
        }}
      >
        {session.teams.map((team) => (
          <option key={team.id} value={team.id}>
            {team.name} ({team.role})
          </option>
        ))}
      </select>
      <ErrorMessage error={error} />
    </div>
  );
}

function AccountMenu() {
  const session = useSession();
  const signOut = useSignOut();
  const navigate = useNavigate();
  return (
    <div className="account">
      <NavLink to="/account">{session.user?.name ?? 'Account'}</NavLink>
      <button
        type="button"
        className="button small"
        onClick={() => void signOut().finally(() => void navigate('/sign-in'))}
      >
        Sign out
      </button>
    </div>
  );
}
