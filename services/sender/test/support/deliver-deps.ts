// The two deliberate choices a test of one process makes when it builds DeliverDeps by hand, named so that
// a reader sees them: no delivery claims, no memory budget. Production wires both in main.ts.
import type { DeliverDeps } from '../../src/delivery/index.ts';

/** Claims that every attempt is this process's at once, and releases nothing: no other process exists. */
export function noClaims(): DeliverDeps['claims'] {
  return { claim: () => Promise.resolve({ kind: 'claimed', retaken: false }), release: () => undefined };
}

/** A memory budget that never waits: a test sends too few messages to need one. */
export function unbounded(): DeliverDeps['budget'] {
  return { reserve: () => Promise.resolve(() => undefined), reserved: 0 };
}
