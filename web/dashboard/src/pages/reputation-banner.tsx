// On every page while the reputation guard has paused the team's sending, or one of its domains': why (the
// rate measured against its line, over how many sends), the lines in force for the team (the install's, or
// those the operator set for it), that queued email waits, and for an admin the button that resumes it
// (POST /reputation/resume). A member is told to ask an admin.
import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { get, post } from '../api/client.ts';
import { useSession } from '../session.tsx';
import { ErrorMessage } from '../ui/feedback.tsx';

type Reputation = ApiShape<'Reputation'>;
type Pause = NonNullable<Reputation['team']['paused']>;
type Thresholds = Reputation['thresholds'];

/** The query key of the team's reputation (its rates and pauses). */
export const REPUTATION = 'reputation';

export function useReputation() {
  return useQuery({
    queryKey: [REPUTATION],
    queryFn: () => get<Reputation>('/reputation'),
    staleTime: 60_000,
  });
}

/** A rate as people read it: 4%, 0.08%, 12.5%. */
function percent(rate: number): string {
  return `${Number((rate * 100).toPrecision(3))}%`;
}

export function ReputationBanner() {
  const reputation = useReputation();
  const data = reputation.data;
  if (!data) return null;
  const pauses: { key: string; label: string; domainId?: string; pause: Pause }[] = [];
  if (data.team.paused) pauses.push({ key: 'team', label: "Your team's sending", pause: data.team.paused });
  for (const domain of data.domains) {
    if (domain.paused) pauses.push({ key: domain.id, label: domain.name, domainId: domain.id, pause: domain.paused });
  }
  return (
    <>
      {pauses.map((p) => (
        <PauseBanner key={p.key} label={p.label} domainId={p.domainId} pause={p.pause} thresholds={data.thresholds} />
      ))}
    </>
  );
}

/** The lines in force, as a sentence: which rates pause, over how many sends, and which the operator set. */
function linesText(thresholds: Thresholds): string {
  const names: Record<Thresholds['set_for_team'][number], string> = {
    bounce_rate: 'bounce line',
    complaint_rate: 'complaint line',
    window: 'window',
    min_sends: 'minimum',
  };
  const lines =
    `Sending pauses at a bounce rate above ${percent(thresholds.bounce_rate)} or a complaint rate above ` +
    `${percent(thresholds.complaint_rate)} over the last ${thresholds.window.toLocaleString('en-US')} sends, ` +
    `judged from ${thresholds.min_sends.toLocaleString('en-US')} sends.`;
  const set = thresholds.set_for_team.map((name) => names[name]);
  if (set.length === 0) return lines;
  const list = set.length === 1 ? set[0] : `${set.slice(0, -1).join(', ')} and ${set.at(-1)}`;
  return `${lines} The ${list} ${set.length === 1 ? 'was' : 'were'} set for your team by the operator.`;
}

function PauseBanner({
  label,
  domainId,
  pause,
  thresholds,
}: {
  label: string;
  domainId?: string | undefined;
  pause: Pause;
  thresholds: Thresholds;
}) {
  const session = useSession();
  const client = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const isAdmin = session.team?.role === 'admin';
  const title = domainId ? `Sending from ${label} is paused` : 'Sending is paused';
  const resume = async () => {
    setBusy(true);
    setError(null);
    try {
      await post('/reputation/resume', domainId ? { domain_id: domainId } : {});
      await client.invalidateQueries({ queryKey: [REPUTATION] });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section role="alert" aria-label={title} className="alert alert-error reputation-banner">
      <strong>{title}.</strong> {pause.message}
      <dl className="reputation-rates">
        <dt>Bounce rate</dt>
        <dd>{percent(pause.bounce_rate)}</dd>
        <dt>Complaint rate</dt>
        <dd>{percent(pause.complaint_rate)}</dd>
        <dt>Sends measured</dt>
        <dd>{pause.sends}</dd>
      </dl>
      <p className="reputation-lines">{linesText(thresholds)}</p>
      {isAdmin ? (
        <button type="button" className="button small" disabled={busy} onClick={() => void resume()}>
          {domainId ? `Resume sending from ${label}` : 'Resume sending'}
        </button>
      ) : (
        <p>An admin of the team can resume sending.</p>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}
