// The sandbox addresses: recipients whose delivery is decided without any network (Postline's own at
// postline.test, and Resend's test addresses at resend.dev, so an integration's tests pass unchanged), and the
// onboarding sender, which any team may send from to them before it has verified a domain.

import { SANDBOX_DOMAINS } from '@postline/contracts';

export { SANDBOX_DOMAINS };

/** Whether `domain` (lower-case) is a sandbox domain. */
export function isSandboxDomain(domain: string): boolean {
  return SANDBOX_DOMAINS.includes(domain);
}

/** Whether a bare address is at a sandbox domain (any case). */
export function isSandboxAddress(address: string): boolean {
  return isSandboxDomain(address.slice(address.lastIndexOf('@') + 1).toLowerCase());
}

/** Whether a bare address is the onboarding sender: `onboarding@` a sandbox domain (any case). */
export function isOnboardingSender(address: string): boolean {
  const at = address.lastIndexOf('@');
  return address.slice(0, at).toLowerCase() === 'onboarding' && isSandboxAddress(address);
}
