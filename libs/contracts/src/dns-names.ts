/** One DNS label: letters, digits and inner hyphens, up to 63 characters (lower case: compare lowered). */
export const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** One or more DNS labels, as for `custom_return_path` (`send`, `bounces.mail`). */
export function isSubdomainLabel(value: string): boolean {
  const labels = value.toLowerCase().split('.');
  return value.length <= 63 && labels.every((l) => DNS_LABEL.test(l));
}

/**
 * A host name as it is compared (lower case, without the root's trailing dot), or undefined when `value` is
 * not one: two or more DNS labels, 253 characters at most, the last not all digits (no top-level domain is,
 * so `127.0.0.1` is an address, not a name). An address literal or a port is not a host name.
 */
export function normalizeHostName(value: string): string | undefined {
  const host = value.toLowerCase().replace(/\.$/, '');
  if (host.length === 0 || host.length > 253) return undefined;
  const labels = host.split('.');
  if (labels.length < 2 || !labels.every((l) => DNS_LABEL.test(l))) return undefined;
  if (/^[0-9]+$/.test(labels.at(-1) ?? '')) return undefined;
  return host;
}
