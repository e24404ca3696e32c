/** One DNS label: letters, digits and inner hyphens, up to 63 characters (lower case: compare lowered). */
export const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** One or more DNS labels, as for `custom_return_path` (`send`, `bounces.mail`). */
export function isSubdomainLabel(value: string): boolean {
  const labels = value.toLowerCase().split('.');
  return value.length <= 63 && labels.every((l) => DNS_LABEL.test(l));
}
