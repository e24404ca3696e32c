// Traffic shaping as GET /deliverability/providers shows it. Each sender process shapes its own traffic
// (it sends from its own address), so each writes a snapshot of its shaping, one row per named provider
// and one for the other MX domains together, and the view puts the processes' rows together: per provider
// the worst of them, and each process's own. Every team reads the view, so nothing in it names another
// team's recipients: replies are cleaned (shaping-reply.ts), and the other MX domains (a company running its
// own mail server) are only counted, never named; operators find them in the metrics and logs.
import {
  PROVIDERS,
  replyCodesOf,
  sanitizeReply,
  type Provider,
  type ProviderState,
  type ShapingEvent,
} from '../../delivery/index.ts';

/** How often a process writes what changed. */
export const SNAPSHOT_EVERY_MS = 2000;
/** The least time between two writes made at once (a named provider pushing back or held), not on the turn. */
export const SNAPSHOT_AT_ONCE_GAP_MS = 500;
/** A row unchanged is written again this often, so that it stays fresh. */
export const SNAPSHOT_REFRESH_MS = 10_000;
/** A row not written for this long is a process gone (killed): the view leaves it out. */
export const SNAPSHOT_STALE_MS = 30_000;
/** Rows of processes gone this long are deleted, by whichever process prunes first. */
export const SNAPSHOT_KEPT_MS = 5 * 60_000;

/** The key of a process's row of the other MX domains it slows or holds, told together. */
export const OTHER_SERVERS_KEY = 'other';

/** `held`: deliveries wait for the hold to end; `slowed`: the rate is below its limit after a pushback. */
export type ShapingState = 'normal' | 'slowed' | 'held';

export type NamedProvider = Exclude<Provider, 'other'>;

/** How many other MX domains a process slows and holds, and the first of their holds to end. */
export type OtherServers = { slowed: number; held: number; firstHeldUntil: Date | null };

/** One provider's shaping in one sender process: what a process writes of it. */
export type ShapingRow = {
  /** `gmail`, …, or `other` (the other MX domains slowed or held, together). */
  key: string;
  provider: Provider;
  /** For `other`, the worst of the MX domains'. */
  state: ShapingState;
  /** Messages a minute allowed now, and the configured limit (0 for `other`, as the next three). */
  ratePerMinute: number;
  limitPerMinute: number;
  connections: number;
  maxConnections: number;
  maxMessagesPerConnection: number;
  /** Deferrals by the provider in a row (short of a pushback). */
  deferrals: number;
  /** The reply that caused the slowdown or hold, cleaned of addresses; for `other`, its codes only. */
  reason: string | null;
  /** For `other`, the last of the holds to end. */
  heldUntil: Date | null;
  /** For `other` only. */
  servers: OtherServers | null;
};

const RANK: Record<ShapingState, number> = { held: 0, slowed: 1, normal: 2 };

function stateOf(s: { heldUntil: Date | null; rate: number; limit: number }): ShapingState {
  if (s.heldUntil) return 'held';
  return s.rate < s.limit ? 'slowed' : 'normal';
}

/** Rates are kept to two decimals: a finer change is no news. */
const round = (n: number) => Math.round(n * 100) / 100;

type Ranked = Pick<ShapingRow, 'state' | 'heldUntil' | 'ratePerMinute' | 'limitPerMinute'>;

/** Worst first: held (the latest release first), then slowed (the lowest share of the limit first). */
function worstFirst(a: Ranked, b: Ranked): number {
  const share = (r: Ranked) => (r.limitPerMinute > 0 ? r.ratePerMinute / r.limitPerMinute : 1);
  return (
    RANK[a.state] - RANK[b.state] ||
    (b.heldUntil?.getTime() ?? 0) - (a.heldUntil?.getTime() ?? 0) ||
    share(a) - share(b)
  );
}

const earliest = (dates: Date[]) => (dates.length ? new Date(Math.min(...dates.map((d) => d.getTime()))) : null);
const latest = (dates: Date[]) => (dates.length ? new Date(Math.max(...dates.map((d) => d.getTime()))) : null);

/**
 * What a process writes of its shaper's states: every named provider it has sent to, and, while any other
 * MX domain is slowed or held, one `other` row counting them (a broadcast reaches thousands of domains;
 * the row changes only when a count, a hold or the worst reply does).
 */
export function shapingRowsOf(states: readonly ProviderState[]): ShapingRow[] {
  const named: ShapingRow[] = [];
  const others: (Ranked & { reason: string | null })[] = [];
  for (const s of states) {
    const state = stateOf(s);
    // Kept by the shaper until the rate is back at its limit, which a lowered limit may reach first.
    const reason = state === 'normal' ? null : s.reason;
    const figures = { state, heldUntil: s.heldUntil, ratePerMinute: round(s.rate), limitPerMinute: round(s.limit) };
    if (s.provider === 'other') {
      if (state !== 'normal') others.push({ ...figures, reason });
      continue;
    }
    named.push({
      key: s.key,
      provider: s.provider,
      ...figures,
      connections: s.connections,
      maxConnections: s.maxConnections,
      maxMessagesPerConnection: s.maxMessagesPerConnection,
      deferrals: s.deferrals,
      reason: reason === null ? null : sanitizeReply(reason),
      servers: null,
    });
  }
  if (others.length === 0) return named;
  const worst = others.sort(worstFirst)[0]!;
  const holds = others.flatMap((o) => (o.state === 'held' && o.heldUntil ? [o.heldUntil] : []));
  return [
    ...named,
    {
      key: OTHER_SERVERS_KEY,
      provider: 'other',
      state: worst.state,
      ratePerMinute: 0,
      limitPerMinute: 0,
      connections: 0,
      maxConnections: 0,
      maxMessagesPerConnection: 0,
      deferrals: 0,
      reason: worst.reason === null ? null : replyCodesOf(worst.reason),
      heldUntil: latest(holds),
      servers: { slowed: others.length - holds.length, held: holds.length, firstHeldUntil: earliest(holds) },
    },
  ];
}

/** Whether two snapshots of one key say the same. */
export function sameRow(a: ShapingRow, b: ShapingRow): boolean {
  return (
    a.key === b.key &&
    a.state === b.state &&
    a.ratePerMinute === b.ratePerMinute &&
    a.limitPerMinute === b.limitPerMinute &&
    a.connections === b.connections &&
    a.maxConnections === b.maxConnections &&
    a.maxMessagesPerConnection === b.maxMessagesPerConnection &&
    a.deferrals === b.deferrals &&
    a.reason === b.reason &&
    a.heldUntil?.getTime() === b.heldUntil?.getTime() &&
    a.servers?.slowed === b.servers?.slowed &&
    a.servers?.held === b.servers?.held &&
    a.servers?.firstHeldUntil?.getTime() === b.servers?.firstHeldUntil?.getTime()
  );
}

/** What a process must write: the rows new or changed, or not written for `refreshMs`, and the keys gone. */
export function snapshotChanges(
  written: ReadonlyMap<string, { row: ShapingRow; at: number }>,
  rows: readonly ShapingRow[],
  now: number,
  refreshMs: number,
): { upsert: ShapingRow[]; remove: string[] } {
  const upsert = rows.filter((row) => {
    const before = written.get(row.key);
    return !before || !sameRow(before.row, row) || now - before.at >= refreshMs;
  });
  const keys = new Set(rows.map((r) => r.key));
  return { upsert, remove: [...written.keys()].filter((key) => !keys.has(key)) };
}

/**
 * Whether a shaping event is written at once rather than on the next turn: a named provider pushing back
 * or held, which a team waits to see. Another MX domain's never is: a broadcast to greylisting servers
 * makes thousands of pushbacks, and the view only counts them.
 */
export function writesAtOnce(key: string, event: ShapingEvent): boolean {
  return (event === 'pushback' || event === 'held') && !key.startsWith('other:');
}

/** One process's row as read back: the row, whose it is, and when it was written. */
export type ReplicaShaping = ShapingRow & {
  /** The process's random id, new at each start. */
  processId: string;
  /** The process (`host (pid n)`): a container restarted has the same name, not the same id. */
  replica: string;
  /** The local address of the process's latest SMTP session, once one has opened. */
  sendingIp: string | null;
  updatedAt: Date;
};

export type ProviderShaping = {
  provider: NamedProvider;
  /** The worst of the processes', with its reason; `heldUntil` the last of their holds to end. */
  state: ShapingState;
  reason: string | null;
  heldUntil: Date | null;
  /** Summed over the processes: each shapes its own share. */
  ratePerMinute: number;
  limitPerMinute: number;
  connections: number;
  maxConnections: number;
  /** The most of any process. */
  deferrals: number;
  /** One process's limits (the last written): what SHAPING_CONFIG sets per process. */
  limits: { messagesPerMinute: number; maxConnections: number; maxMessagesPerConnection: number };
  /** The processes' own rows, the worst first. */
  replicas: ReplicaShaping[];
  updatedAt: Date;
};

/** The other MX domains slowed or held, counted over the processes, none named. */
export type OtherServersShaping = {
  /** Summed over the processes: a domain one process slows and another holds counts once in each. */
  slowed: number;
  held: number;
  firstHeldUntil: Date | null;
  lastHeldUntil: Date | null;
  /** The codes of the worst one's reply. */
  reason: string | null;
};

export type ShapingView = { providers: ProviderShaping[]; otherServers: OtherServersShaping };

const providerOrder = (p: Provider) => PROVIDERS.indexOf(p);

/**
 * The processes' fresh rows put together: each named provider (the held first, then the slowed, then the
 * rest), and the other MX domains counted. Replies are cleaned again: a process of an older version wrote
 * them whole, and its rows (`other:<MX domain>`, one per domain) are counted as one domain each.
 */
export function shapingViewOf(rows: readonly ReplicaShaping[]): ShapingView {
  const byProvider = new Map<NamedProvider, ReplicaShaping[]>();
  const others: ReplicaShaping[] = [];
  for (const row of rows) {
    if (row.provider === 'other') others.push(row);
    else byProvider.set(row.provider, [...(byProvider.get(row.provider) ?? []), row]);
  }
  const providers = [...byProvider].map(([provider, replicas]): ProviderShaping => {
    const sorted = replicas
      .map((r) => ({ ...r, reason: r.reason === null ? null : sanitizeReply(r.reason) }))
      .sort(
        (a, b) =>
          worstFirst(a, b) ||
          a.replica.localeCompare(b.replica) ||
          a.processId.localeCompare(b.processId) ||
          a.updatedAt.getTime() - b.updatedAt.getTime(),
      );
    const worst = sorted[0]!;
    const last = replicas.reduce((a, b) => (b.updatedAt > a.updatedAt ? b : a));
    const sum = (pick: (r: ReplicaShaping) => number) => round(replicas.reduce((n, r) => n + pick(r), 0));
    return {
      provider,
      state: worst.state,
      reason: worst.reason,
      heldUntil: worst.heldUntil,
      ratePerMinute: sum((r) => r.ratePerMinute),
      limitPerMinute: sum((r) => r.limitPerMinute),
      connections: sum((r) => r.connections),
      maxConnections: sum((r) => r.maxConnections),
      deferrals: Math.max(...replicas.map((r) => r.deferrals)),
      limits: {
        messagesPerMinute: last.limitPerMinute,
        maxConnections: last.maxConnections,
        maxMessagesPerConnection: last.maxMessagesPerConnection,
      },
      replicas: sorted,
      updatedAt: last.updatedAt,
    };
  });
  providers.sort((a, b) => RANK[a.state] - RANK[b.state] || providerOrder(a.provider) - providerOrder(b.provider));
  return { providers, otherServers: otherServersOf(others) };
}

function otherServersOf(rows: readonly ReplicaShaping[]): OtherServersShaping {
  const counted = rows.map(
    (r): OtherServers =>
      r.servers ??
      (r.state === 'held'
        ? { slowed: 0, held: 1, firstHeldUntil: r.heldUntil }
        : { slowed: r.state === 'slowed' ? 1 : 0, held: 0, firstHeldUntil: null }),
  );
  const worst = [...rows].sort(worstFirst)[0];
  return {
    slowed: counted.reduce((n, c) => n + c.slowed, 0),
    held: counted.reduce((n, c) => n + c.held, 0),
    firstHeldUntil: earliest(counted.flatMap((c) => (c.firstHeldUntil ? [c.firstHeldUntil] : []))),
    lastHeldUntil: latest(rows.flatMap((r) => (r.heldUntil ? [r.heldUntil] : []))),
    reason: worst?.reason ? replyCodesOf(worst.reason) : null,
  };
}
