import { isIP } from 'node:net';
import { isPublicAddress } from '@postline/platform';

export type EndpointCheck = { ok: true; url: URL } | { ok: false; message: string };

export const MAX_ENDPOINT_LENGTH = 2048;

/**
 * Ports a public endpoint may use: https's own and its common alternative. Other ports are refused
 * because an https endpoint on, say, :25 or :6379 is almost always a probe of someone else's service.
 * With `allowPrivate` any port is allowed (local receivers listen on random ports).
 */
const PUBLIC_PORTS = new Set(['', '443', '8443']);

/** Names that only ever resolve inside a network (RFC 6761, RFC 6762, RFC 8375 and common practice). */
const INTERNAL_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa'];

/**
 * Save-time check of a webhook endpoint URL. It judges the URL as written (after WHATWG normalisation, so
 * `https://2130706433/` is judged as `127.0.0.1`); it does not resolve names. A name that resolves to an
 * internal address passes here and is refused at delivery time by the connection guard.
 *
 * `allowPrivate` (development and tests) also allows `http:`, any port, internal names and addresses.
 */
export function checkEndpointUrl(raw: string, options: { allowPrivate: boolean }): EndpointCheck {
  if (raw.length > MAX_ENDPOINT_LENGTH)
    return fail(`The \`endpoint\` must be at most ${MAX_ENDPOINT_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('The `endpoint` must be a valid URL.');
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return fail('The `endpoint` must use https.');
  if (url.username !== '' || url.password !== '')
    return fail('The `endpoint` must not contain a username or password.');
  if (options.allowPrivate) return { ok: true, url };

  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    return isPublicAddress(host)
      ? portCheck(url)
      : fail('The `endpoint` must not point to a private, loopback or reserved address.');
  }
  const name = host.replace(/\.+$/, '');
  if (!name.includes('.') || INTERNAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))) {
    return fail('The `endpoint` must use a public host name.');
  }
  return portCheck(url);
}

function portCheck(url: URL): EndpointCheck {
  return PUBLIC_PORTS.has(url.port) ? { ok: true, url } : fail('The `endpoint` must use port 443 or 8443.');
}

function fail(message: string): EndpointCheck {
  return { ok: false, message };
}
