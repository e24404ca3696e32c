// How long the team's rows are kept (the operator sets it; the dashboard only shows it): a sentence the
// lists of what ages out (emails, received mail, logs, webhook events) add to their description.
import { useQuery } from '@tanstack/react-query';
import type { DashboardShape } from '@postline/contracts';
import { get } from '../api/client.ts';

/** The team (GET /dashboard-api/team), cached under the key the Team page reads it with. */
export function useTeam() {
  return useQuery({
    queryKey: ['team'],
    queryFn: () => get<DashboardShape<'DashboardTeam'>>('/dashboard-api/team'),
  });
}

export function retentionText(days: number): string {
  return days === 1 ? '1 day' : `${days} days`;
}

/** " Kept for 30 days; older ones are deleted." after a list's description, once the team is known. */
export function RetentionNote({ what }: { what: string }) {
  const team = useTeam();
  if (!team.data) return null;
  return (
    <>
      {' '}
      {what} are kept for {retentionText(team.data.retention_days)}; older ones are deleted.
    </>
  );
}
