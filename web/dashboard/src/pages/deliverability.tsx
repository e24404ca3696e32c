// Deliverability: how fast the install sends to each mailbox provider (GET /deliverability/providers), and
// why and until when it holds back after a provider pushed back (Gmail's `421 4.7.28`). The install's, not
// the team's: every team's mail to a provider leaves through the same sender processes (so other mail
// servers are only counted, and replies show no address). Read again every few seconds, as the processes
// write their state.
import { useId } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { ApiShape } from '@postline/contracts';
import { get } from '../api/client.ts';
import { Badge, EmptyState, ErrorMessage, Loading, type BadgeTone } from '../ui/feedback.tsx';
import { Time } from '../ui/time.tsx';

type Provider = ApiShape<'ProviderShaping'>['providers'][number];
type OtherServers = ApiShape<'ProviderShaping'>['other_mail_servers'];
type State = Provider['state'];

const POLL_MS = 5000;

const NAMES: Record<Provider['provider'], string> = {
  gmail: 'Gmail',
  microsoft: 'Microsoft',
  yahoo: 'Yahoo',
  apple: 'Apple',
};
const TONES: Record<State, BadgeTone> = { held: 'bad', slowed: 'warn', normal: 'good' };

const nameOf = (p: Provider) => NAMES[p.provider];
const count = (n: number) => Math.round(n).toLocaleString();

/** How long until `iso`, as a person says it: `in 40 seconds`, `in 4 minutes`, `now`. */
function untilNow(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (seconds <= 0) return 'now';
  if (seconds < 90) return `in ${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `in ${minutes} minutes`;
  return `in ${Math.round(minutes / 60)} hours`;
}

/** `Mail to Microsoft is held.`: what the live region says, unchanged while the same providers are held. */
function heldSentence(held: Provider[]): string {
  if (held.length === 0) return '';
  const names = held.map(nameOf);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return `Mail to ${list} is held.`;
}

export default function DeliverabilityPage() {
  const shaping = useQuery({
    queryKey: ['deliverability', 'providers'],
    queryFn: () => get<ApiShape<'ProviderShaping'>>('/deliverability/providers'),
    refetchInterval: POLL_MS,
  });
  const providers = shaping.data?.providers;
  const others = shaping.data?.other_mail_servers;
  const held = providers?.filter((p) => p.state === 'held') ?? [];
  const nothing = providers?.length === 0 && others?.slowed === 0 && others.held === 0;
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Deliverability</h1>
          <p className="muted">
            How fast this install may send to each mailbox provider now, and why it slows down or holds mail back when a
            provider asks it to. The same for every team: all mail leaves through the same servers.
          </p>
        </div>
      </div>
      {/* Always there, so a screen reader announces a hold as it begins; its words change only when which
          providers are held does (the countdowns below change every few seconds and are not announced). */}
      <p role="status" className="visually-hidden">
        {heldSentence(held)}
      </p>
      <ErrorMessage error={shaping.error} />
      {providers === undefined || others === undefined ? (
        shaping.isPending ? (
          <Loading />
        ) : null
      ) : nothing ? (
        <EmptyState title="Nothing sent to a mailbox provider lately">
          <p className="muted">
            Gmail, Microsoft, Yahoo and Apple appear here once mail has gone to them, and other mail servers are counted
            while they are slowed down or held.
          </p>
        </EmptyState>
      ) : (
        <>
          {held.map((p) => (
            <HeldBanner key={p.provider} provider={p} />
          ))}
          <ProvidersTable providers={providers} others={others} />
          {providers.length > 0 ? <ReplicasTable providers={providers} /> : null}
        </>
      )}
    </>
  );
}

/** A held provider: until when, in how long, and its reply. Not a live region: its countdown changes. */
function HeldBanner({ provider: p }: { provider: Provider }) {
  const title = useId();
  return (
    <section className="alert alert-warning" aria-labelledby={title}>
      <strong id={title}>Mail to {nameOf(p)} is held</strong> until <Time value={p.held_until} /> (
      {p.held_until ? untilNow(p.held_until) : 'soon'}). Its mail waits and is sent again then; mail to other providers
      is not held. {nameOf(p)} answered:
      <code className="deliverability-reply">{p.reason}</code>
    </section>
  );
}

function ProvidersTable({ providers, others }: { providers: Provider[]; others: OtherServers }) {
  return (
    <section aria-labelledby="providers-title" className="section">
      <h2 id="providers-title">Mailbox providers</h2>
      <p className="muted">
        The rate allowed is the messages a minute sent at most. After a provider pushes back (a <code>421</code>, a{' '}
        <code>4.7.x</code> deferral, a refused connection) it is lowered, and a provider that keeps pushing back is held
        for a while; each delivery that succeeds gives some rate back.
      </p>
      {providers.length === 0 ? (
        <p className="muted">No mail to Gmail, Microsoft, Yahoo or Apple lately.</p>
      ) : (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Mailbox providers, scrollable">
          <table className="records">
            <caption className="visually-hidden">Mailbox providers</caption>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">State</th>
                <th scope="col">Allowed rate</th>
                <th scope="col">Sessions</th>
                <th scope="col">Why</th>
                <th scope="col">Held until</th>
              </tr>
            </thead>
            <tbody>
              {providers.map((p) => (
                <tr key={p.provider}>
                  <th scope="row">{nameOf(p)}</th>
                  <td data-label="State">
                    <Badge tone={TONES[p.state]}>{p.state}</Badge>
                  </td>
                  <td data-label="Allowed rate">
                    <Rate of={p} label={nameOf(p)} />
                  </td>
                  <td data-label="Sessions">
                    {p.connections} of {p.max_connections}
                    <span className="muted small-text block">
                      {p.limits.max_messages_per_connection} messages per session
                    </span>
                  </td>
                  <td data-label="Why" className="deliverability-reason">
                    {p.reason ? <code>{p.reason}</code> : <span className="muted">—</span>}
                    {p.deferrals_in_a_row > 0 ? (
                      <span className="muted small-text block">
                        {p.deferrals_in_a_row} deferral{p.deferrals_in_a_row === 1 ? '' : 's'} in a row
                      </span>
                    ) : null}
                  </td>
                  <td data-label="Held until">
                    {p.held_until ? (
                      <>
                        <Time value={p.held_until} stacked />
                        <span className="muted small-text block">{untilNow(p.held_until)}</span>
                      </>
                    ) : (
                      <span className="muted">{p.state === 'held' ? 'soon' : 'not held'}</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <OtherServersLine others={others} />
    </section>
  );
}

/**
 * The other mail servers (companies running their own), counted and never named: they are other teams'
 * recipients'. A team finds its own in its emails' events.
 */
function OtherServersLine({ others }: { others: OtherServers }) {
  if (others.slowed === 0 && others.held === 0)
    return (
      <p className="deliverability-others">
        <strong>Other mail servers:</strong> none slowed or held.
      </p>
    );
  const first = others.held_until_earliest;
  const last = others.held_until_latest;
  return (
    <p className="deliverability-others">
      <strong>Other mail servers:</strong> {others.slowed} slowed, {others.held} held
      {last
        ? others.held === 1 || !first
          ? ` (released ${untilNow(last)})`
          : ` (the first released ${untilNow(first)}, the last ${untilNow(last)})`
        : null}
      .{' '}
      {others.reason ? (
        <>
          The worst answered <code>{others.reason}</code>.{' '}
        </>
      ) : null}
      <span className="muted">
        They are not named here, as they may be other teams&rsquo; recipients&rsquo;; the reply to each of your emails
        is in its events.
      </span>
    </p>
  );
}

/** The messages a minute allowed now (not those sent) against the limit, as a figure and a meter. */
function Rate({ of, label }: { of: Pick<Provider, 'rate_per_minute' | 'limit_per_minute'>; label: string }) {
  const share = of.limit_per_minute > 0 ? of.rate_per_minute / of.limit_per_minute : 1;
  return (
    <>
      {count(of.rate_per_minute)} of {count(of.limit_per_minute)} a minute
      <meter
        className="deliverability-meter"
        min={0}
        max={1}
        low={0.5}
        optimum={1}
        value={share}
        aria-label={`${label}: allowed rate, ${Math.round(share * 100)}% of its limit`}
      />
    </>
  );
}

/** Each sender process's own state: each sends from its own address and shapes its own share. */
function ReplicasTable({ providers }: { providers: Provider[] }) {
  return (
    <section aria-labelledby="replicas-title" className="section">
      <h2 id="replicas-title">By sender process</h2>
      <p className="muted">
        Each sender process sends from its own address and shapes its own traffic: a provider may hold one and not
        another. The figures above are theirs together. The sending IP is the address of the process&rsquo;s latest
        session, to whichever provider it went.
      </p>
      <div className="table-wrap" tabIndex={0} role="group" aria-label="Sender processes, scrollable">
        <table className="records">
          <caption className="visually-hidden">Sender processes</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Process</th>
              <th scope="col">Sending IP</th>
              <th scope="col">State</th>
              <th scope="col">Allowed rate</th>
              <th scope="col">Sessions</th>
              <th scope="col">Held until</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {providers.flatMap((p) =>
              p.replicas.map((r) => (
                <tr key={`${p.provider} ${r.process_id}`}>
                  <th scope="row">{nameOf(p)}</th>
                  <td data-label="Process">
                    <span className="nowrap">{r.replica}</span>
                    <span className="muted small-text block">id {r.process_id}</span>
                  </td>
                  <td data-label="Sending IP">{r.sending_ip ?? <span className="muted">not yet known</span>}</td>
                  <td data-label="State">
                    <Badge tone={TONES[r.state]}>{r.state}</Badge>
                  </td>
                  <td data-label="Allowed rate">
                    {count(r.rate_per_minute)} of {count(r.limit_per_minute)} a minute
                  </td>
                  <td data-label="Sessions">
                    {r.connections} of {r.max_connections}
                  </td>
                  <td data-label="Held until">
                    <Time value={r.held_until} stacked />
                  </td>
                  <td data-label="Updated">
                    <Time value={r.updated_at} stacked />
                  </td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
