// How a page says it is loading, empty or wrong: each error shown by the API's own message.
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { ApiError } from '../api/client.ts';

export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : 'Something went wrong.';
  const code = error instanceof ApiError ? error.code : null;
  return (
    <div role="alert" className="alert alert-error">
      <strong>{message}</strong>
      {code && code !== 'network_error' ? <span className="muted"> ({code})</span> : null}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p role="status" className="muted">
      {label}
    </p>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <h2>{title}</h2>
      {children}
    </div>
  );
}

export function Notice({ tone = 'info', children }: { tone?: 'info' | 'warning' | 'success'; children: ReactNode }) {
  return (
    <div role={tone === 'warning' ? 'alert' : 'status'} className={`alert alert-${tone}`}>
      {children}
    </div>
  );
}

export function Badge({ tone = 'neutral', children }: { tone?: BadgeTone; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}
export type BadgeTone = 'neutral' | 'good' | 'bad' | 'warn' | 'info';

/** The tone of a status word the API answers (domains, records, webhooks, deliveries, emails). */
export function toneOf(status: string): BadgeTone {
  if (['verified', 'enabled', 'success', 'delivered', 'sent', 'active'].includes(status)) return 'good';
  if (['failed', 'failure', 'temporary_failure', 'disabled', 'bounced', 'complained', 'revoked'].includes(status))
    return 'bad';
  if (['pending', 'attempting', 'not_started', 'scheduled', 'queued', 'delivery_delayed'].includes(status))
    return 'warn';
  return 'neutral';
}

export function StatusBadge({ status }: { status: string }) {
  return <Badge tone={toneOf(status)}>{status.replaceAll('_', ' ')}</Badge>;
}

/**
 * A count in a table cell: a muted ellipsis while it is read, then the number, linked when `link` says
 * where its items are listed.
 */
export function Count({
  value,
  link,
}: {
  value: number | undefined;
  link?: (shown: string) => { to: string; label: string };
}) {
  if (value === undefined) return <span className="muted">…</span>;
  const shown = value.toLocaleString();
  if (!link) return <>{shown}</>;
  const { to, label } = link(shown);
  return (
    <Link to={to} aria-label={label}>
      {shown}
    </Link>
  );
}
