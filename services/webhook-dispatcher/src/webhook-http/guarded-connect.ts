import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { checkTargetAddress } from '@postline/platform';

export const BLOCKED_ADDRESS_CODE = 'ERR_BLOCKED_ADDRESS';

/** We refused to dial (or to keep) a connection to a non-public address. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = BLOCKED_ADDRESS_CODE;
  readonly address: string;
  readonly reason: string;

  constructor(address: string, reason: string) {
    super(`refused to connect to ${address} (${reason})`);
    this.address = address;
    this.reason = reason;
  }
}

export type AddressGuard = { allowPrivate: boolean };

/**
 * Wraps a `net` lookup so that a name with any non-public answer fails with BlockedAddressError before a
 * connection is attempted. Refusing the whole answer (rather than dropping the bad addresses) keeps a
 * name that mixes public and internal records from being retried against the internal one.
 */
export function guardLookup(lookup: LookupFunction, guard: AddressGuard): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, result, family) => {
      if (err) return callback(err, options.all ? [] : '');
      const addresses: LookupAddress[] =
        typeof result === 'string' ? [{ address: result, family: family ?? isIP(result) }] : result;
      for (const { address } of addresses) {
        const check = checkTargetAddress(address, guard);
        if (!check.ok) return callback(new BlockedAddressError(address, check.reason), options.all ? [] : '');
      }
      const first = addresses[0];
      if (!first) {
        return callback(
          Object.assign(new Error(`no address for ${hostname}`), { code: 'ENODATA', hostname }),
          options.all ? [] : '',
        );
      }
      if (options.all) return callback(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}

export type GuardedConnectorOptions = AddressGuard & {
  /** How names are resolved; the system resolver when absent. Not guarded here: see guardLookup. */
  lookup?: LookupFunction;
  /** Budget for TCP connect, and again for the TLS handshake. */
  timeoutMs: number;
  /** Trust anchors (PEM) that replace the system's roots: for tests and private CAs only. */
  ca?: string | string[];
};

/**
 * An undici connector that dials in two steps: TCP first, then checks `socket.remoteAddress` (the address
 * actually reached, whatever the URL spelled and whatever DNS answered this time) before a single byte is
 * written, then starts TLS on that socket for `https:`. An IP-literal host is checked before dialing, so a
 * blocked literal never even opens a connection. This is the last line behind the URL policy and the
 * guarded lookup, and the one DNS rebinding cannot get past.
 */
export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const guard = { allowPrivate: options.allowPrivate };
  const tcp = buildConnector({ timeout: options.timeoutMs, ...(options.lookup ? { lookup: options.lookup } : {}) });
  // keepAlive is set on the TCP socket; the TLS socket wraps it.
  const tls = buildConnector({
    timeout: options.timeoutMs,
    keepAlive: false,
    ...(options.ca ? { ca: options.ca } : {}),
  });

  return (target, callback) => {
    if (isIP(target.hostname) !== 0) {
      const check = checkTargetAddress(target.hostname, guard);
      if (!check.ok) return callback(new BlockedAddressError(target.hostname, check.reason), null);
    }
    const secure = target.protocol === 'https:';
    const port = target.port || (secure ? '443' : '80');
    tcp({ ...target, protocol: 'http:', port }, (err, socket) => {
      if (err) return callback(err, null);
      const remote = socket.remoteAddress ?? '';
      const check = checkTargetAddress(remote, guard);
      if (!check.ok) {
        socket.destroy();
        return callback(new BlockedAddressError(remote || 'unknown', check.reason), null);
      }
      if (!secure) return callback(null, socket);
      tls({ ...target, port, httpSocket: socket }, (tlsErr, tlsSocket) => {
        if (tlsErr) {
          socket.destroy();
          return callback(tlsErr, null);
        }
        return callback(null, tlsSocket);
      });
    });
  };
}
