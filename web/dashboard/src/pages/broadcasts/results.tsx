// A broadcast's results, read again every few seconds while the page is open (it updates as it sends and
// as its recipients open, click and unsubscribe): the counts by outcome, the clicks per link, and its
// recipients by outcome (the outcome and the page's cursor in the URL).
import { useSearchParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import type { ApiRequest, ApiShape } from '@postline/contracts';
import { get } from '../../api/client.ts';
import { EmptyState, ErrorMessage, Loading } from '../../ui/feedback.tsx';
import { ListTable, Pager, useListPage } from '../../ui/list.tsx';
import { parseTimestamp } from '../../ui/time.tsx';
import { BROADCASTS, type Broadcast } from './queries.ts';
import { Stat } from '../../ui/stat.tsx';

const POLL_MS = 2500;
/** How long after it was sent a broadcast's results are still read every POLL_MS (then every minute). */
const FRESH_MS = 10 * 60_000;

/**
 * How often the results are read again: every few seconds while it sends and in the first minutes after
 * (when most opens, clicks and bounces come), then every minute; never for one that was not sent.
 */
function pollMs(b: Broadcast): number | false {
  if (b.status === 'queued') return POLL_MS;
  if (b.status !== 'sent') return false;
  const sentAt = b.sent_at ? parseTimestamp(b.sent_at).getTime() : Number.NaN;
  return Number.isNaN(sentAt) || Date.now() - sentAt < FRESH_MS ? POLL_MS : 60_000;
}

type Outcome = NonNullable<ApiRequest<'BroadcastRecipientsQuery'>['type']>;
const OUTCOMES: Record<Outcome, string> = {
  sent: 'Sent',
  delivered: 'Delivered',
  opened: 'Opened',
  clicked: 'Clicked',
  unsubscribed: 'Unsubscribed',
  bounced: 'Bounced',
  complained: 'Complained',
  suppressed: 'Suppressed',
};

export function Results({ broadcast: b }: { broadcast: Broadcast }) {
  const results = useQuery({
    queryKey: [BROADCASTS, 'results', b.id],
    queryFn: () => get<ApiShape<'BroadcastResults'>>(`/broadcasts/${b.id}/results`),
    refetchInterval: pollMs(b),
  });
  const links = useQuery({
    queryKey: [BROADCASTS, 'links', b.id],
    queryFn: () => get<ApiShape<'BroadcastClickedLinkList'>>(`/broadcasts/${b.id}/clicked-links`, { limit: 100 }),
    refetchInterval: pollMs(b),
  });
  const r = results.data;
  return (
    <>
      <section aria-labelledby="results-heading" className="card">
        <h2 id="results-heading">Results</h2>
        {b.status === 'queued' ? <p role="status">It is being sent: the counts update as it goes.</p> : null}
        {b.status === 'canceled' ? (
          <p className="muted">It was canceled: these are the emails it made before.</p>
        ) : null}
        <ErrorMessage error={results.error} />
        {results.isPending ? <Loading /> : null}
        {r ? (
          <dl className="stats" aria-label="Results">
            <Stat label="Sent" value={String(r.sent)} />
            <Stat label="Delivered" value={String(r.delivered)} />
            <Stat
              label="Opened by people"
              value={String(r.opened.people)}
              detail={`${r.opened.machines} more by machines (privacy proxies, prefetchers)`}
            />
            <Stat
              label="Clicked by people"
              value={String(r.clicked.people)}
              detail={`${r.clicked.scanners} more by link scanners`}
            />
            <Stat label="Unsubscribed" value={String(r.unsubscribed)} />
            <Stat label="Bounced" value={String(r.bounced)} />
            <Stat label="Complained" value={String(r.complained)} />
            <Stat label="Suppressed" value={String(r.suppressed)} />
          </dl>
        ) : null}
      </section>
      <section aria-labelledby="links-heading" className="card">
        <h2 id="links-heading">Clicks per link</h2>
        <ErrorMessage error={links.error} />
        {links.data && links.data.data.length === 0 ? <p className="muted">No link clicked yet.</p> : null}
        {links.data && links.data.data.length > 0 ? (
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Clicks per link</caption>
              <thead>
                <tr>
                  <th scope="col">Link</th>
                  <th scope="col">Clicks</th>
                  <th scope="col">Recipients who clicked</th>
                </tr>
              </thead>
              <tbody>
                {links.data.data.map((link) => (
                  <tr key={link.id}>
                    <th scope="row" className="break-anywhere">
                      {link.url}
                    </th>
                    <td>{link.clicks}</td>
                    <td>{link.unique_clicks}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
      <Recipients broadcast={b} />
    </>
  );
}

type Recipient = ApiShape<'BroadcastRecipientList'>['data'][number];

function Recipients({ broadcast: b }: { broadcast: Broadcast }) {
  const [params, setParams] = useSearchParams();
  const asked = params.get('outcome') as Outcome | null;
  const outcome: Outcome = asked && asked in OUTCOMES ? asked : 'sent';
  const page = useListPage<Recipient>(
    `${BROADCASTS}-recipients`,
    `/broadcasts/${b.id}/recipients`,
    { type: outcome },
    25,
    pollMs(b) || undefined,
  );
  return (
    <section aria-labelledby="recipients-heading" className="card">
      <h2 id="recipients-heading">Recipients</h2>
      <div className="field">
        <label htmlFor="recipients-outcome">Outcome</label>
        <select id="recipients-outcome" value={outcome} onChange={(e) => setParams({ outcome: e.target.value })}>
          {Object.entries(OUTCOMES).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <ListTable
        query={page}
        caption={`Recipients: ${OUTCOMES[outcome].toLowerCase()}`}
        columns={['Email', 'Details']}
        empty={<EmptyState title={`No recipients ${OUTCOMES[outcome].toLowerCase()}`} />}
        row={(item) => (
          <tr key={item.id}>
            <th scope="row" className="break-anywhere">
              {item.email}
            </th>
            <td>
              {item.bounce_type ? `${item.bounce_type} bounce` : null}
              {item.count !== undefined ? `${item.count} ${outcome === 'opened' ? 'opens' : 'clicks'}` : null}
              {item.clicked_links?.length ? `: ${item.clicked_links.join(', ')}` : null}
            </td>
          </tr>
        )}
      />
      <Pager page={page.data} after={page.after} before={page.before} />
    </section>
  );
}
