// On every page: the team's webhook endpoints that their failures disabled, each with why and since when, and
// one button that enables it again and replays every failure of its run (the events recorded while it was
// disabled included), so nothing it missed is lost. An endpoint disabled on purpose (through the API or the
// Disable button) is not shown here.
import { useState } from 'react';
import { Link } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiRequest } from '@postline/contracts';
import { get, patch, post } from '../../api/client.ts';
import { ErrorMessage } from '../../ui/feedback.tsx';
import { parseTimestamp, Time } from '../../ui/time.tsx';
import { shortUrl, WEBHOOKS, type ReplayWebhookEventsBody, type WebhookItem, type WebhookReplay } from './api.ts';

type Page = { data: WebhookItem[]; has_more: boolean };

/** The endpoints disabled by their failures (the first 100 endpoints: a team has a handful). */
function useFailedEndpoints() {
  return useQuery({
    queryKey: [WEBHOOKS, 'list', 'banner'],
    queryFn: () => get<Page>('/webhooks', { limit: 100 }),
    select: (page) => page.data.filter((hook) => hook.status === 'disabled' && hook.disabled_by === 'failures'),
    refetchInterval: 60_000,
    // A person without access to webhooks (or a failed read) simply sees no banner.
    retry: false,
  });
}

/**
 * Enables the endpoint, then replays its failed events since its run of failures began, call after call
 * until none is left (each call replays at most 10,000). Resolves with how many were replayed.
 */
export async function enableAndReplay(hook: Pick<WebhookItem, 'id' | 'failing_since'>): Promise<number> {
  const enable: ApiRequest<'UpdateWebhookBody'> = { status: 'enabled' };
  await patch(`/webhooks/${hook.id}`, enable);
  if (!hook.failing_since) return 0;
  let since: string | null = parseTimestamp(hook.failing_since).toISOString();
  let replayed = 0;
  while (since) {
    const body: ReplayWebhookEventsBody = { since, status: 'failed' };
    const done: WebhookReplay = await post<WebhookReplay>(`/webhooks/${hook.id}/events/replay`, body);
    replayed += done.replayed;
    since = done.next_since;
  }
  return replayed;
}

export function DisabledWebhooksBanner() {
  const hooks = useFailedEndpoints();
  const [done, setDone] = useState<{ endpoint: string; replayed: number } | null>(null);
  if (!hooks.data?.length && !done) return null;
  return (
    <div className="disabled-webhooks">
      {hooks.data?.map((hook) => (
        <DisabledEndpoint key={hook.id} hook={hook} onDone={setDone} />
      ))}
      {done ? (
        <div role="status" className="alert alert-success">
          <strong>{shortUrl(done.endpoint)}</strong> is enabled again;{' '}
          {done.replayed === 1 ? '1 failed event is' : `${done.replayed} failed events are`} being delivered to it once
          more.
        </div>
      ) : null}
    </div>
  );
}

function DisabledEndpoint({
  hook,
  onDone,
}: {
  hook: WebhookItem;
  onDone: (done: { endpoint: string; replayed: number }) => void;
}) {
  const client = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const short = shortUrl(hook.endpoint);
  const recover = async () => {
    setBusy(true);
    setError(null);
    try {
      const replayed = await enableAndReplay(hook);
      onDone({ endpoint: hook.endpoint, replayed });
      await client.invalidateQueries({ queryKey: [WEBHOOKS] });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div role="alert" className="alert alert-warning webhook-disabled">
      <div>
        <strong>
          Webhook endpoint <Link to={`/webhooks/${hook.id}`}>{short}</Link> is disabled
        </strong>
        {hook.disabled_reason ? `: ${hook.disabled_reason}` : ''}
        {hook.failing_since ? (
          <>
            {' '}
            (failing since <Time value={hook.failing_since} />
            {hook.disabled_at ? (
              <>
                , disabled <Time value={hook.disabled_at} />
              </>
            ) : null}
            )
          </>
        ) : null}
        . Its events are kept as failed: once it answers again, enable it and they are delivered once more.
        <ErrorMessage error={error} />
      </div>
      <button
        type="button"
        className="button primary"
        disabled={busy}
        aria-label={`Enable and replay failed events: ${short}`}
        onClick={() => void recover()}
      >
        Enable and replay failed events
      </button>
    </div>
  );
}
