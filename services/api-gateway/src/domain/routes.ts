import {
  INBOUND_LINK_PATH,
  PUBLIC_LINK_PATH,
  SIGNUP_CONFIRM_PATH,
  SIGNUP_FORM_PATH,
  TRACKING_LINK_PATH,
  UNSUBSCRIBE_LINK_PATH,
} from '@postline/contracts';

/** The services a gateway route family is forwarded to. */
export type Owner = 'sender' | 'inbound-smtp' | 'webhook-dispatcher' | 'domain-verifier';

/** Each owner's internal base URL. */
export type Owners = Record<Owner, string>;

const FAMILIES: [RegExp, Owner][] = [
  [/^\/emails\/receiving(\/|$)/, 'inbound-smtp'],
  [/^\/emails(\/|$)/, 'sender'],
  [
    /^\/(templates|contacts|segments|audiences|topics|broadcasts|suppressions|reputation|deliverability|contact-properties|dev-inbox|forms)(\/|$)/,
    'sender',
  ],
  // A domain's DMARC aggregate reports are received and kept by the MX's service.
  [/^\/domains\/[^/]+\/dmarc-reports\/?$/, 'inbound-smtp'],
  [/^\/domains(\/|$)/, 'domain-verifier'],
  [/^\/webhooks(\/|$)/, 'webhook-dispatcher'],
];

export function ownerOf(path: string): Owner | undefined {
  return FAMILIES.find(([re]) => re.test(path))?.[1];
}

/** A route served without an API key, and the methods it takes. */
export type PublicRoute = {
  path: RegExp;
  owner: Owner;
  methods: readonly string[];
  /** Pages for people (a signup form's): the gateway's refusals are pages too. */
  pages?: boolean;
};

/**
 * Routes served without an API key, named by a signed token the owner checks (`<payload>.<tag>`,
 * base64url): a share page or an attachment download (read only), a received email's raw MIME or attachment download (read only), and a broadcast recipient's unsubscribe
 * link (the preference page, its form and the RFC 8058 one-click POST), and an email's open pixel and
 * tracking redirects (`/o/{token}`, `/c/{token}`, on any host: each domain's tracking host is a CNAME to
 * ours), and a signup form's hosted page and confirmation links (`/f/{public_id}`, named by the form's
 * unguessable public id). Only that shape passes, so no dot segment can reach another of the owner's routes.
 */
const PUBLIC_ROUTES: PublicRoute[] = [
  { path: PUBLIC_LINK_PATH, owner: 'sender', methods: ['GET', 'HEAD'] },
  { path: INBOUND_LINK_PATH, owner: 'inbound-smtp', methods: ['GET', 'HEAD'] },
  { path: UNSUBSCRIBE_LINK_PATH, owner: 'sender', methods: ['GET', 'HEAD', 'POST'] },
  { path: TRACKING_LINK_PATH, owner: 'sender', methods: ['GET', 'HEAD'] },
  { path: SIGNUP_FORM_PATH, owner: 'sender', methods: ['GET', 'HEAD', 'POST'], pages: true },
  { path: SIGNUP_CONFIRM_PATH, owner: 'sender', methods: ['GET', 'HEAD', 'POST'], pages: true },
];

export function publicRouteOf(path: string): PublicRoute | undefined {
  return PUBLIC_ROUTES.find((route) => route.path.test(path));
}

export function publicOwnerOf(path: string): Owner | undefined {
  return publicRouteOf(path)?.owner;
}

/** `/emails/` and `/emails` are one route (express routes are not strict about the trailing slash). */
export function normalizePath(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/** The sending routes: POST /emails (JSON or a raw message/rfc822 message) and /emails/batch. */
export function isSendingRoute(method: string, path: string): boolean {
  const p = normalizePath(path);
  return method === 'POST' && (p === '/emails' || p === '/emails/batch');
}

/** The SMTP relay's check of an API key at AUTH (the gateway answers it itself). */
export const RELAY_CREDENTIALS_PATH = '/relay/credentials';

export function isRelayCredentialsRoute(method: string, path: string): boolean {
  return (method === 'GET' || method === 'HEAD') && normalizePath(path) === RELAY_CREDENTIALS_PATH;
}

/** The only routes a sending_access key may call: the sending routes and the relay's key check. */
export function isSendingAccessRoute(method: string, path: string): boolean {
  return isSendingRoute(method, path) || isRelayCredentialsRoute(method, path);
}

/**
 * Routes the per-team rate limit does not count: the relay's key check, made once per SMTP session (the
 * relay limits failed AUTH attempts per client address itself; the submissions that follow are counted).
 */
export function isRateLimitExempt(method: string, path: string): boolean {
  return isRelayCredentialsRoute(method, path);
}

export function isIdempotentRoute(method: string, path: string): boolean {
  return isSendingRoute(method, path);
}

export function isAutomationsRoute(path: string): boolean {
  return /^\/automations(\/|$)/.test(path);
}
