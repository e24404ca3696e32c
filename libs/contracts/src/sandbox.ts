/**
 * The domains whose addresses are the sandbox's test addresses: Postline's own, and Resend's, so that an
 * integration's tests run unchanged. Nothing sent to them leaves the install, and no team may add them.
 */
export const SANDBOX_DOMAINS: readonly string[] = ['postline.test', 'resend.dev'];
