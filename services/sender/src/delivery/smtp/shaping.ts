// Traffic shaping per mailbox provider: how fast, and over how many sessions, this process sends to each
// provider (gmail, microsoft, yahoo, apple, or another MX domain), and how it backs off when one pushes back.
// A process sends from its host's one address, so its shaping is per provider and sending IP; replicas each
// shape their own share (docs/behaviour.md).
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { createKeyedSlots, type KeyedSlots } from '@postline/platform';
import { PROVIDERS, providerOfMx, type Provider } from '../domain/providers.ts';

const Limits = z
  .object({
    /** Transactions (sessions) open at once to the provider. */
    maxConnections: z.number().int().positive(),
    /** Messages sent on one session before it is closed. */
    maxMessagesPerConnection: z.number().int().positive(),
    /** Messages started per minute (a token bucket holding one second's worth). */
    messagesPerMinute: z.number().positive(),
  })
  .strict();
export type ProviderLimits = z.infer<typeof Limits>;

const Pushback = z
  .object({
    /** The rate is multiplied by this on each pushback (421, 4.7.x, connection refused). */
    decrease: z.number().gt(0).lt(1),
    /** Pushbacks in a row, or the rate down to `minRateFraction` of its limit, put the provider on hold. */
    holdAfterPushbacks: z.number().int().positive(),
    /** This many deferrals in a row (any 4xx from the provider) count as one pushback. */
    deferralsAsPushback: z.number().int().positive(),
    minRateFraction: z.number().gt(0).lte(1),
    /** The first hold; each next one before the rate is back to its limit doubles, up to `maxHoldMs`. */
    holdMs: z.number().int().positive(),
    maxHoldMs: z.number().int().positive(),
    /** Each delivery that succeeds gives back this fraction of the limit (additive increase). */
    recoverFraction: z.number().gt(0).lte(1),
  })
  .strict();
export type PushbackPolicy = z.infer<typeof Pushback>;

/** The file SHAPING_CONFIG names: any part left out keeps its default. */
export const ShapingFile = z
  .object({
    providers: z.partialRecord(z.enum(PROVIDERS), Limits.partial()).optional(),
    pushback: Pushback.partial().optional(),
  })
  .strict();
export type ShapingFile = z.infer<typeof ShapingFile>;

export type ShapingConfig = { providers: Record<Provider, ProviderLimits>; pushback: PushbackPolicy };

/**
 * Defaults (docs/behaviour.md, "Traffic shaping"). No provider publishes numeric limits; these are Postfix's
 * per-destination defaults (20 sessions, 100 messages per cached session) and rates that a sending IP with
 * a good reputation is known to get through, lower for the providers that throttle new or small senders.
 */
export const DEFAULT_SHAPING: ShapingConfig = {
  providers: {
    gmail: { maxConnections: 20, maxMessagesPerConnection: 100, messagesPerMinute: 3000 },
    microsoft: { maxConnections: 10, maxMessagesPerConnection: 100, messagesPerMinute: 1200 },
    yahoo: { maxConnections: 10, maxMessagesPerConnection: 100, messagesPerMinute: 1200 },
    apple: { maxConnections: 10, maxMessagesPerConnection: 100, messagesPerMinute: 1200 },
    // Per MX domain; Postfix sets no rate for a destination (destination_rate_delay 0): in effect none here.
    other: { maxConnections: 20, maxMessagesPerConnection: 100, messagesPerMinute: 600_000 },
  },
  pushback: {
    decrease: 0.5,
    holdAfterPushbacks: 3,
    deferralsAsPushback: 10,
    minRateFraction: 0.05,
    holdMs: 5 * 60_000,
    maxHoldMs: 60 * 60_000,
    recoverFraction: 0.02,
  },
};

/** The defaults with a file's values over them. */
export function shapingConfigOf(file: ShapingFile): ShapingConfig {
  const providers = { ...DEFAULT_SHAPING.providers };
  for (const p of PROVIDERS) providers[p] = { ...providers[p], ...file.providers?.[p] };
  return { providers, pushback: { ...DEFAULT_SHAPING.pushback, ...file.pushback } };
}

/** Reads and checks the SHAPING_CONFIG file (JSON); throws with what is wrong. */
export function readShapingFile(path: string): ShapingConfig {
  const parsed = ShapingFile.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success)
    throw new Error(`${path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return shapingConfigOf(parsed.data);
}

/**
 * Reads the SHAPING_CONFIG file again on SIGHUP; a file that does not parse is logged and the limits in
 * force are kept. Returns the stop.
 */
export function reloadShapingOnHangup(
  path: string,
  shaper: Shaper,
  logger: { info: (o: object, m: string) => void; error: (o: object, m: string) => void },
): () => void {
  const reload = () => {
    try {
      shaper.configure(readShapingFile(path));
      logger.info({ path }, 'traffic shaping limits reloaded');
    } catch (err) {
      logger.error({ err, path }, 'traffic shaping file not reloaded; the limits in force are kept');
    }
  };
  process.on('SIGHUP', reload);
  return () => void process.off('SIGHUP', reload);
}

/** How one delivery to a provider went, for its shaping. */
export type DeliverySignal =
  | { kind: 'success' }
  /** The provider asked us to slow down: 421, a 4.7.x deferral, a refused connection. */
  | { kind: 'pushback'; reason: string }
  /** Another deferral by the provider. */
  | { kind: 'deferral'; reason: string }
  /** Nothing that says anything about the provider (a bounce of one address, a local error). */
  | { kind: 'none' };

export type Turn =
  | {
      kind: 'go';
      maxMessagesPerConnection: number;
      /** Gives the connection slot back, telling how the delivery went. Once. */
      done: (signal: DeliverySignal) => void;
    }
  /** Not now: the provider is held, or its rate has no room within the wait allowed. */
  | { kind: 'wait'; until: Date; reason: string; held: boolean };

export type ProviderState = {
  /** `gmail`, …, or `other:<MX domain>`. */
  key: string;
  provider: Provider;
  /** Messages per minute allowed now, and the configured limit. */
  rate: number;
  limit: number;
  /** Sessions open to the key now, and the configured caps. */
  connections: number;
  maxConnections: number;
  maxMessagesPerConnection: number;
  /** Deferrals by the provider in a row, short of the ones that count as a pushback. */
  deferrals: number;
  heldUntil: Date | null;
  /** The reply that caused the last slowdown or hold. */
  reason: string | null;
};

export type Shaper = {
  /** The shaping key of an MX host: its provider, or `other:<MX domain>`. */
  keyOf: (mx: string) => string;
  /** Waits (up to `maxWaitMs`) for the key's rate and a connection slot. */
  admit: (key: string, maxWaitMs: number) => Promise<Turn>;
  /**
   * The hold on the key, as admit would answer it at once, or undefined: lets a caller defer a delivery before
   * doing any work for it (counted as throttled, like admit's).
   */
  held: (key: string) => (Turn & { kind: 'wait' }) | undefined;
  /** Every key that has been used, with its state now. */
  states: () => ProviderState[];
  /** Replaces the limits (a reloaded file); current rates and holds are kept, within the new limits. */
  configure: (config: ShapingConfig) => void;
};

/** What the shaping did for one key: a pushback, a deferral by the provider, a hold, a delivery deferred by it. */
export type ShapingEvent = 'pushback' | 'deferral' | 'held' | 'throttled';

type State = {
  provider: Provider;
  rate: number;
  tokens: number;
  refilledAt: number;
  heldUntil: number;
  holds: number;
  pushbacks: number;
  deferrals: number;
  reason: string | null;
};

/** The MX domain of a host: its last two labels (`mx1.example.co` → `example.co`). */
function mxDomain(mx: string): string {
  return mx.toLowerCase().replace(/\.$/, '').split('.').slice(-2).join('.');
}

/**
 * @example
 * const turn = await shaper.admit(shaper.keyOf(mx), 30_000);
 * if (turn.kind === 'go') try { ... } finally { turn.done(signal) }
 */
export function createShaper(options: {
  config: ShapingConfig;
  /** POSTLINE_DELAY_SCALE: multiplies the holds. */
  scale?: number;
  now?: () => number;
  onChange?: (key: string, event: ShapingEvent) => void;
}): Shaper {
  let config = options.config;
  const scale = options.scale ?? 1;
  const now = options.now ?? Date.now;
  const states = new Map<string, State>();
  let slots = new Map<Provider, KeyedSlots>();
  const limitsOf = (s: State) => config.providers[s.provider];

  const slotsOf = (provider: Provider) => {
    let found = slots.get(provider);
    if (!found) slots.set(provider, (found = createKeyedSlots(config.providers[provider].maxConnections)));
    return found;
  };

  const stateOf = (key: string): State => {
    let state = states.get(key);
    if (!state) {
      const provider = (key.startsWith('other:') ? 'other' : key) as Provider;
      const rate = config.providers[provider].messagesPerMinute;
      state = {
        provider,
        rate,
        tokens: Math.max(1, rate / 60),
        refilledAt: now(),
        heldUntil: 0,
        holds: 0,
        pushbacks: 0,
        deferrals: 0,
        reason: null,
      };
      states.set(key, state);
    }
    return state;
  };

  const refill = (s: State, at: number) => {
    const capacity = Math.max(1, s.rate / 60);
    s.tokens = Math.min(capacity, s.tokens + ((at - s.refilledAt) * s.rate) / 60_000);
    s.refilledAt = at;
  };

  const pushback = (key: string, s: State, reason: string) => {
    const policy = config.pushback;
    const limit = limitsOf(s).messagesPerMinute;
    s.reason = reason;
    s.pushbacks++;
    s.rate = Math.max(limit * policy.minRateFraction, s.rate * policy.decrease);
    options.onChange?.(key, 'pushback');
    if (s.pushbacks >= policy.holdAfterPushbacks || s.rate <= limit * policy.minRateFraction) {
      const hold = Math.min(policy.maxHoldMs, policy.holdMs * 2 ** s.holds) * scale;
      s.heldUntil = now() + hold;
      s.holds++;
      s.pushbacks = 0;
      s.tokens = Math.min(s.tokens, 1);
      options.onChange?.(key, 'held');
    }
  };

  /** The key's hold now, counted as a delivery it deferred; undefined when it is not held. */
  const holdOf = (key: string, s: State, at: number): (Turn & { kind: 'wait' }) | undefined => {
    if (s.heldUntil <= at) return undefined;
    options.onChange?.(key, 'throttled');
    return { kind: 'wait', until: new Date(s.heldUntil), reason: s.reason ?? 'held', held: true };
  };

  const signal = (key: string, s: State, result: DeliverySignal) => {
    const policy = config.pushback;
    const limit = limitsOf(s).messagesPerMinute;
    // The reply to a delivery that began before the hold says nothing new: the hold stands as it is (else the
    // sessions in flight when a provider pushes back would each lower the rate and double the hold again).
    if ((result.kind === 'pushback' || result.kind === 'deferral') && s.heldUntil > now()) return;
    switch (result.kind) {
      case 'success':
        s.pushbacks = 0;
        s.deferrals = 0;
        s.rate = Math.min(limit, s.rate + limit * policy.recoverFraction);
        if (s.rate >= limit) {
          s.holds = 0;
          s.reason = null;
        }
        return;
      case 'pushback':
        s.deferrals = 0;
        return pushback(key, s, result.reason);
      case 'deferral':
        options.onChange?.(key, 'deferral');
        if (++s.deferrals >= policy.deferralsAsPushback) {
          s.deferrals = 0;
          pushback(key, s, `${policy.deferralsAsPushback} deferrals in a row, the last: ${result.reason}`);
        }
        return;
      case 'none':
        return;
    }
  };

  return {
    keyOf(mx) {
      const provider = providerOfMx(mx);
      return provider === 'other' ? `other:${mxDomain(mx)}` : provider;
    },

    async admit(key, maxWaitMs) {
      const s = stateOf(key);
      const at = now();
      const hold = holdOf(key, s, at);
      if (hold) return hold;
      refill(s, at);
      const waitMs = s.tokens >= 1 ? 0 : Math.ceil(((1 - s.tokens) * 60_000) / s.rate);
      if (waitMs > maxWaitMs) {
        options.onChange?.(key, 'throttled');
        return {
          kind: 'wait',
          until: new Date(at + waitMs),
          reason: s.reason ?? `rate limit of ${Math.round(s.rate)} messages a minute`,
          held: false,
        };
      }
      s.tokens -= 1; // taken now, so concurrent callers queue behind it
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      const release = await slotsOf(s.provider).acquire(key, { timeoutMs: Math.max(1, maxWaitMs - waitMs) });
      if (!release)
        return {
          kind: 'wait',
          until: new Date(now() + 1000),
          reason: 'every connection to the provider busy',
          held: false,
        };
      // Held while this delivery waited for its token or a session: it waits for the hold, not sent against it.
      const heldMeanwhile = holdOf(key, s, now());
      if (heldMeanwhile) {
        release();
        return heldMeanwhile;
      }
      let finished = false;
      return {
        kind: 'go',
        maxMessagesPerConnection: limitsOf(s).maxMessagesPerConnection,
        done(result) {
          if (finished) return;
          finished = true;
          release();
          signal(key, s, result);
        },
      };
    },

    held(key) {
      const s = states.get(key);
      return s ? holdOf(key, s, now()) : undefined;
    },

    states() {
      const at = now();
      // Keys back at their limit and idle for a minute are forgotten: a new one starts there anyway.
      for (const [key, s] of states)
        if (s.rate >= limitsOf(s).messagesPerMinute && s.heldUntil <= at && s.pushbacks === 0 && s.deferrals === 0)
          if (at - s.refilledAt > 60_000) states.delete(key);
      return [...states].map(([key, s]) => ({
        key,
        provider: s.provider,
        rate: s.rate,
        limit: limitsOf(s).messagesPerMinute,
        connections: slots.get(s.provider)?.active(key) ?? 0,
        maxConnections: limitsOf(s).maxConnections,
        maxMessagesPerConnection: limitsOf(s).maxMessagesPerConnection,
        deferrals: s.deferrals,
        heldUntil: s.heldUntil > at ? new Date(s.heldUntil) : null,
        reason: s.reason,
      }));
    },

    configure(next) {
      config = next;
      slots = new Map(); // new limits for new turns; turns under way give their slot back to the old one
      for (const s of states.values()) s.rate = Math.min(s.rate, limitsOf(s).messagesPerMinute);
    },
  };
}

/** How a delivery's outcomes read for its provider's shaping. */
export function signalOf(
  outcomes: Iterable<{ status: string; code: number; enhanced?: string | null; response: string; mx?: string | null }>,
): DeliverySignal {
  const all = [...outcomes];
  if (all.some((o) => o.status === 'delivered')) return { kind: 'success' };
  let deferral: DeliverySignal = { kind: 'none' };
  for (const o of all) {
    if (o.status !== 'deferred') continue;
    // 4.7.10 (encryption needed) is our own TLS-required deferral, not the provider asking us to slow down.
    const policy = o.enhanced?.startsWith('4.7.') === true && o.enhanced !== '4.7.10';
    if (o.code === 421 || policy || /ECONNREFUSED/.test(o.response)) return { kind: 'pushback', reason: o.response };
    if (o.mx) deferral = { kind: 'deferral', reason: o.response };
  }
  return deferral;
}
