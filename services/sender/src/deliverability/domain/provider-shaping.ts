// Traffic shaping as GET /deliverability/providers shows it. Each sender process shapes its own traffic
// (it sends from its own address), so each writes a snapshot of its shaping, one row per provider, and the
// view puts the processes' rows together: per provider the worst of them, and each process's own.
import { PROVIDERS, type Provider, type ProviderState } from '../../delivery/index.ts';

/** How often a process writes what changed. */
export const SNAPSHOT_EVERY_MS = 2000;
/** A row unchanged is written again this often, so that it stays fresh. */
export const SNAPSHOT_REFRESH_MS = 10_000;
/** A row not written for this long is a process gone (killed): the view leaves it out. */
export const SNAPSHOT_STALE_MS = 30_000;
/** Rows of processes gone this long are deleted, by whichever process prunes first. */
export const SNAPSHOT_KEPT_MS = 5 * 60_000;

/** `held`: deliveries wait for the hold to end; `slowed`: the rate is below its limit after a pushback. */
export type ShapingState = 'normal' | 'slowed' | 'held';

/** One provider's shaping in one sender process: what a process writes of it. */
export type ShapingRow = {
  /** `gmail`, …, or `other:<MX domain>`. */
  key: string;
  provider: Provider;
  state: ShapingState;
  /** Messages a minute allowed now, and the configured limit. */
  ratePerMinute: number;
  limitPerMinute: number;
  connections: number;
  maxConnections: number;
  maxMessagesPerConnection: number;
  /** Deferrals by the provider in a row (short of a pushback). */
  deferrals: number;
  /** The reply that caused the slowdown or hold. */
  reason: string | null;
  heldUntil: Date | null;
};

/** Another MX domain's rows a process writes at most (the worst first): all others are at their limits. */
export const MAX_OTHER_ROWS = 20;

const RANK: Record<ShapingState, number> = { held: 0, slowed: 1, normal: 2 };

function stateOf(s: { heldUntil: Date | null; rate: number; limit: number }): ShapingState {
  if (s.heldUntil) return 'held';
  return s.rate < s.limit ? 'slowed' : 'normal';
}

/** Rates are kept to two decimals: a finer change is no news. */
const round = (n: number) => Math.round(n * 100) / 100;

/** Worst first: held (the latest release first), then slowed (the lowest share of the limit first). */
function worstFirst(a: ShapingRow, b: ShapingRow): number {
  return (
    RANK[a.state] - RANK[b.state] ||
    (b.heldUntil?.getTime() ?? 0) - (a.heldUntil?.getTime() ?? 0) ||
    a.ratePerMinute / a.limitPerMinute - b.ratePerMinute / b.limitPerMinute
  );
}

/**
 * What a process writes of its shaper's states: every named provider it has sent to, and another MX domain
 * only while it is slowed or held (a broadcast reaches thousands of domains, nearly all at their limits),
 * at most `maxOther` of them, the worst first.
 */
export function shapingRowsOf(states: readonly ProviderState[], maxOther = MAX_OTHER_ROWS): ShapingRow[] {
  const rows = states.map((s): ShapingRow => {
    const state = stateOf(s);
    return {
      key: s.key,
      provider: s.provider,
      state,
      ratePerMinute: round(s.rate),
      limitPerMinute: round(s.limit),
      connections: s.connections,
      maxConnections: s.maxConnections,
      maxMessagesPerConnection: s.maxMessagesPerConnection,
      deferrals: s.deferrals,
      // Kept by the shaper until the rate is back at its limit, which a lowered limit may reach first.
      reason: state === 'normal' ? null : s.reason,
      heldUntil: s.heldUntil,
    };
  });
  const others = rows
    .filter((r) => r.provider === 'other' && r.state !== 'normal')
    .sort(worstFirst)
    .slice(0, maxOther);
  return [...rows.filter((r) => r.provider !== 'other'), ...others];
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
    a.heldUntil?.getTime() === b.heldUntil?.getTime()
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

/** One process's row as read back: the row, whose it is, and when it was written. */
export type ReplicaShaping = ShapingRow & {
  /** The process (`host (pid n)`). */
  replica: string;
  /** The local address its SMTP sessions leave from, once one has opened. */
  sendingIp: string | null;
  updatedAt: Date;
};

export type ProviderShaping = {
  key: string;
  provider: Provider;
  mxDomain: string | null;
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

const providerOrder = (p: Provider) => PROVIDERS.indexOf(p);

/** The processes' fresh rows put together per provider: the held first, then the slowed, then the rest. */
export function providerShapingOf(rows: readonly ReplicaShaping[]): ProviderShaping[] {
  const byKey = new Map<string, ReplicaShaping[]>();
  for (const row of rows) byKey.set(row.key, [...(byKey.get(row.key) ?? []), row]);
  const providers = [...byKey].map(([key, replicas]): ProviderShaping => {
    const sorted = [...replicas].sort(
      (a, b) => worstFirst(a, b) || a.replica.localeCompare(b.replica) || a.updatedAt.getTime() - b.updatedAt.getTime(),
    );
    const worst = sorted[0]!;
    const latest = replicas.reduce((a, b) => (b.updatedAt > a.updatedAt ? b : a));
    const sum = (pick: (r: ReplicaShaping) => number) => round(replicas.reduce((n, r) => n + pick(r), 0));
    return {
      key,
      provider: worst.provider,
      mxDomain: key.startsWith('other:') ? key.slice('other:'.length) : null,
      state: worst.state,
      reason: worst.reason,
      heldUntil: worst.heldUntil,
      ratePerMinute: sum((r) => r.ratePerMinute),
      limitPerMinute: sum((r) => r.limitPerMinute),
      connections: sum((r) => r.connections),
      maxConnections: sum((r) => r.maxConnections),
      deferrals: Math.max(...replicas.map((r) => r.deferrals)),
      limits: {
        messagesPerMinute: latest.limitPerMinute,
        maxConnections: latest.maxConnections,
        maxMessagesPerConnection: latest.maxMessagesPerConnection,
      },
      replicas: sorted,
      updatedAt: latest.updatedAt,
    };
  });
  return providers.sort(
    (a, b) =>
      RANK[a.state] - RANK[b.state] ||
      providerOrder(a.provider) - providerOrder(b.provider) ||
      a.key.localeCompare(b.key),
  );
}
