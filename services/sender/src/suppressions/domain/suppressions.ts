import { bareAddress } from '../../message/index.ts';

/**
 * An address as the suppression list keeps it: lower case, its domain in punycode, so that `u@bücher.de`
 * matches a send to it.
 */
export function listedAddress(address: string): string {
  return bareAddress(address).toLowerCase();
}
