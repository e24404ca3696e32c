import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Agent, request } from 'undici';
import {
  CONTACT_IMPORT_BODY_LIMIT_BYTES,
  ENVELOPE_FROM_HEADER,
  ENVELOPE_TO_HEADER,
  PUBLIC_LINK_GONE,
  publicLinkIdentity,
  RAW_EMAIL_BODY,
  SIGNUP_FORM_PATH,
  signupFormPublicId,
  signupFormTeam,
  UNSUBSCRIBE_BODY_LIMIT_BYTES,
  unsubscribeLinkTeam,
} from '@postline/contracts';
import {
  ApiError,
  IDEMPOTENCY_HASH_HEADER,
  IDEMPOTENCY_HEADER,
  KEY_DOMAIN_HEADER,
  KEY_HEADER,
  REQUEST_LOG_HEADER,
  notFound,
  PERMISSION_HEADER,
  TEAM_HEADER,
  TEAM_MEMBERS_HEADER,
  USER_HEADER,
  USER_ROLE_HEADER,
  type Logger,
} from '@postline/platform';
import {
  isSendingRoute,
  normalizePath,
  ownerOf,
  publicOwnerOf,
  publicRouteOf,
  type Owners,
  type PublicRoute,
} from '../domain/routes.ts';
import type { FormSubmitLimit } from '../redis/form-submit-limit.ts';
import type { WindowCount } from '../redis/window-counter.ts';
import { authOf, heldOf, requestLogIdOf, setLoggedResponseBody } from './context.ts';
import { isPageRefusal, sendRefusalPage } from './form-pages.ts';
import { rateLimited } from './rate-limit.ts';
import { rawEmailOf } from './raw-email.ts';
import { FORWARD_TIMEOUT_MS } from '../domain/idempotency.ts';

const PASS_HEADERS = ['x-batch-validation', 'x-resend-batch-validation', 'user-agent', 'x-request-id'];

/**
 * Bodies the gateway passes on as they come, unparsed, with their own content type: the CSV upload of a
 * contact import (multipart/form-data). Its limit is the reference's 50 MB file and room for the form's
 * other parts; the owner checks the file itself.
 */
const STREAMED_BODIES = [
  {
    method: 'POST',
    path: '/contacts/imports',
    type: 'multipart/form-data',
    limitBytes: CONTACT_IMPORT_BODY_LIMIT_BYTES,
    tooLarge: 'The request body is too large: the file of a contact import may be at most 50 MB.',
  },
] as const;

/** An owner's answer as the gateway passes it on: `disposition`, a file's name (a raw message's download). */
export type Forwarded = { status: number; contentType: string; body: Buffer; disposition?: string };

/** Answers passed on as the owner streams them (a list's CSV export), by content type. */
const STREAMED_ANSWERS = /^text\/csv\b/;

export type ForwardHooks = {
  /** Called just before the request leaves for the owner: from here on the owner may act on it. */
  onForwarding?: (res: Response) => void;
  /** Called with the owner's answer before it is sent (idempotency stores it). */
  onResponse?: (res: Response, answer: Forwarded) => Promise<void>;
  /**
   * Called when the forward failed without an answer (the owner could not be reached, cut the connection or
   * did not answer in time), before the error goes on.
   */
  onFailed?: (res: Response) => Promise<void>;
};

/** undici's network and timeout errors carry a code (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`, ...). */
function networkCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('E') || code.startsWith('UND_ERR')) ? code : undefined;
}

/** Kept-alive pooled connections to the owners, bounded by the forwarding timeout. */
function ownerAgent(connections: number): Agent {
  return new Agent({
    connections,
    keepAliveTimeout: 30_000,
    headersTimeout: FORWARD_TIMEOUT_MS,
    bodyTimeout: FORWARD_TIMEOUT_MS,
  });
}

/**
 * The team's members that a send names, for the onboarding sender (which may write to them): only when the
 * body (JSON) names `onboarding@`, and only the members the body or the raw envelope names, so that the
 * header stays as small as the request's recipients. Without them (the database is away) a send goes on:
 * only the onboarding sender's sends to members are refused.
 */
async function membersNamed(
  memberAddresses: (teamId: string) => Promise<readonly string[]>,
  teamId: string,
  sent: unknown,
  req: Request,
): Promise<readonly string[]> {
  if (typeof sent !== 'string') return [];
  // A large body (attachments) is not copied to be searched: every send passes here.
  if (sent.length > 1_000_000) return [];
  const text = sent.toLowerCase();
  if (req.is(RAW_EMAIL_BODY.type) !== RAW_EMAIL_BODY.type && !text.includes('onboarding@')) return [];
  const members = await memberAddresses(teamId).catch((err: unknown) => {
    req.log.warn({ err }, 'team members could not be read for the onboarding sender');
    return [];
  });
  return members.filter((address) => text.includes(address));
}

function ownerUnavailable(): ApiError {
  return new ApiError(503, 'service_unavailable', 'The service is temporarily unavailable. Please try again later.');
}

/**
 * Forwards each resource family to its owning service's internal HTTP API with the team attached, over
 * kept-alive pooled connections (undici's request: a fraction of fetch's cost per call).
 */
export function forwardToOwners(deps: {
  owners: Owners;
  logger: Logger;
  hooks?: ForwardHooks;
  /** On a send: the team's member addresses, to which the onboarding sender may send. */
  memberAddresses?: (teamId: string) => Promise<readonly string[]>;
}): RequestHandler {
  const agent = ownerAgent(256);
  return async (req, res, next) => {
    const owner = ownerOf(req.path);
    if (!owner) return next();
    // The URL as the owner will see it (dot segments resolved) must still be in the same family, so that
    // `/emails/../metrics` cannot reach an owner's other routes.
    const target = new URL(req.originalUrl, deps.owners[owner]);
    if (ownerOf(target.pathname) !== owner) return next();
    const auth = authOf(res);
    const headers: Record<string, string> = {
      [TEAM_HEADER]: auth.teamId,
      [PERMISSION_HEADER]: auth.permission,
      accept: 'application/json',
    };
    if (auth.keyId) headers[KEY_HEADER] = auth.keyId;
    if (auth.domainId) headers[KEY_DOMAIN_HEADER] = auth.domainId;
    if (auth.user) {
      headers[USER_HEADER] = auth.user.id;
      headers[USER_ROLE_HEADER] = auth.user.role;
    }
    const logId = requestLogIdOf(res);
    if (logId) headers[REQUEST_LOG_HEADER] = logId;
    const idempotencyKey = req.header('idempotency-key');
    if (idempotencyKey) headers[IDEMPOTENCY_HEADER] = idempotencyKey;
    const held = heldOf(res);
    if (held) headers[IDEMPOTENCY_HASH_HEADER] = held.hash;
    for (const name of PASS_HEADERS) {
      const value = req.header(name);
      if (value) headers[name] = value;
    }
    const raw = rawEmailOf(res);
    const streamed = raw ? undefined : streamedBody(req);
    const hasBody = !['GET', 'HEAD'].includes(req.method) && (req.method !== 'DELETE' || req.body !== undefined);
    let body: Buffer | Readable | string | undefined;
    if (raw) {
      // A raw email goes on as it came, with its envelope (read whole by rawEmailBody).
      headers['content-type'] = RAW_EMAIL_BODY.type;
      headers[ENVELOPE_FROM_HEADER] = raw.envelopeFrom;
      headers[ENVELOPE_TO_HEADER] = raw.envelopeTo;
      body = raw.bytes;
    } else if (streamed) {
      Object.assign(headers, streamed.headers);
      body = streamed.body;
    } else if (hasBody) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.body ?? {});
    }
    if (deps.memberAddresses && isSendingRoute(req.method, req.path)) {
      const members = await membersNamed(deps.memberAddresses, auth.teamId, raw ? raw.envelopeTo : body, req);
      if (members.length > 0) headers[TEAM_MEMBERS_HEADER] = members.join(',');
    }

    let answer: Forwarded;
    deps.hooks?.onForwarding?.(res);
    try {
      // Redirects are not followed: an owner's answer goes back as it is.
      const response = await request(target, {
        dispatcher: agent,
        method: req.method as 'GET',
        headers,
        body,
      });
      const contentType = response.headers['content-type'];
      if (req.method === 'GET' && typeof contentType === 'string' && STREAMED_ANSWERS.test(contentType)) {
        // An export: passed on as the owner writes it, never held whole (nor logged: the log keeps JSON).
        setLoggedResponseBody(res, null);
        res.status(response.statusCode).setHeader('content-type', contentType);
        const disposition = response.headers['content-disposition'];
        if (typeof disposition === 'string') res.setHeader('content-disposition', disposition);
        res.setHeader('cache-control', 'no-store');
        await pipeline(response.body, res).catch((err: unknown) => {
          // The reader went away (a closed tab), or the owner stopped part-way: the answer is cut either way.
          if (req.socket.destroyed) req.log.info({ owner }, 'streamed answer cut: the client went away');
          else req.log.error({ err, owner }, 'owner failed during a streamed answer');
          res.destroy();
        });
        return;
      }
      const disposition = response.headers['content-disposition'];
      answer = {
        status: response.statusCode,
        contentType: typeof contentType === 'string' ? contentType : 'application/json; charset=utf-8',
        body: Buffer.from(await response.body.arrayBuffer()),
        ...(typeof disposition === 'string' ? { disposition } : {}),
      };
    } catch (err) {
      await deps.hooks?.onFailed?.(res);
      if (streamed?.exceeded()) throw bodyTooLarge(streamed.tooLarge);
      const code = networkCode(err);
      if (code === undefined) throw err;
      req.log.error({ err, owner, code }, 'owner did not answer');
      throw ownerUnavailable();
    }
    await deps.hooks?.onResponse?.(res, answer);
    sendForwarded(res, answer);
  };
}

type StreamedBody = {
  headers: Record<string, string>;
  body: Readable;
  tooLarge: string;
  /** Whether the body went past its limit while it was being sent (the owner's request was then cut). */
  exceeded: () => boolean;
};

/**
 * A request whose body is passed on as a stream (STREAMED_BODIES), counted on its way so that a body of
 * unknown length stops at the limit; one whose declared length is over it is refused at once (413).
 */
function streamedBody(req: Request): StreamedBody | undefined {
  const match = STREAMED_BODIES.find(
    (streamed) => streamed.method === req.method && normalizePath(req.path) === streamed.path,
  );
  if (!match || !req.is(match.type)) return undefined;
  const length = req.header('content-length');
  const { limitBytes, tooLarge } = match;
  if (length !== undefined && Number(length) > limitBytes) throw bodyTooLarge(tooLarge);
  let bytes = 0;
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limitBytes) throw new Error('request body over its limit');
      yield chunk;
    }
  }
  const headers: Record<string, string> = { 'content-type': req.header('content-type') ?? match.type };
  if (length !== undefined) headers['content-length'] = length;
  return { headers, body: Readable.from(counted()), tooLarge, exceeded: () => bytes > limitBytes };
}

function bodyTooLarge(message: string): ApiError {
  return new ApiError(413, 'validation_error', message);
}

/** The owner's headers a public page or download keeps on its way out. */
const PUBLIC_ANSWER_HEADERS = [
  'content-type',
  'content-length',
  'content-disposition',
  'content-security-policy',
  'x-content-type-options',
  'referrer-policy',
  'cache-control',
  'x-robots-tag',
  'x-dns-prefetch-control',
  // A tracking redirect's target (the owner redirects only to the URL its sealed token names).
  'location',
];

export type PublicForwardDeps = {
  owners: Owners;
  /** Counts a request in its key's one-second window (redis/window-counter.ts), undefined when Redis is away. */
  countRequest: (key: string) => Promise<WindowCount | undefined>;
  redisPrefix: string;
  /** Requests per second one link may take (PUBLIC_LINK_RATE_LIMIT_PER_SECOND). */
  perLinkPerSecond: number;
  /** Whether the team a link belongs to still has access. */
  teamActive: (teamId: string) => Promise<boolean>;
  /** Counts a hosted signup form's submit per client address and per form (redis/form-submit-limit.ts). */
  formSubmitLimit?: FormSubmitLimit;
};

/** The bodies a public POST may carry (an unsubscribe link's one-click POST or its page's form). */
const PUBLIC_FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'];

/**
 * The public routes (share pages, attachment downloads, unsubscribe links, open pixels and tracking
 * redirects), before authentication: the methods each route takes, with no team and of the caller's headers
 * only accept, user-agent and its address (x-forwarded-for), streamed back as the owner answers. The owner
 * checks the signed token in the path and names the link's team in its answer (never passed on): a team
 * whose access is disabled has its links answer 404 like an expired one. Each link takes
 * at most `perLinkPerSecond` requests a second, so a link posted where crowds or crawlers find it cannot
 * turn into a load on the owner. A POST (an unsubscribe link's, a signup form's submit or confirmation)
 * carries a small form body, and is not forwarded at all when the team its token or form id names is
 * disabled, so that it changes nothing. A signup form's submits are also limited per client address and per
 * form (formSubmitLimit), and on its pages the gateway's refusals (404, 429, 503) are pages, not JSON.
 */
export function forwardPublic(deps: PublicForwardDeps): RequestHandler {
  const agent = ownerAgent(64);
  return async (req, res, next) => {
    const route = publicRouteOf(req.path);
    if (!route) return next();
    if (!route.methods.includes(req.method)) {
      const allow = route.methods.join(', ');
      res.setHeader('allow', allow);
      throw new ApiError(405, 'method_not_allowed', `Method not allowed. Allowed: ${allow}`);
    }
    // A signup form's pages are for people: the gateway's own refusals there are pages too.
    if (!route.pages) return forwardLink(route, req, res, next);
    try {
      await forwardLink(route, req, res, next);
    } catch (err) {
      if (!(err instanceof ApiError) || !isPageRefusal(err) || res.headersSent) throw err;
      sendRefusalPage(res, err);
    }
  };

  async function forwardLink(route: PublicRoute, req: Request, res: Response, next: NextFunction): Promise<void> {
    const { owner } = route;
    const target = new URL(req.path, deps.owners[owner]);
    if (publicOwnerOf(target.pathname) !== owner) return next();
    if (req.method === 'POST' && SIGNUP_FORM_PATH.test(target.pathname)) await limitFormSubmit(deps, req, target);
    // The query goes on as it came (a share page's `images=blocked`); the token in the path names what is read.
    target.search = new URL(req.originalUrl, 'http://gateway').search;
    // Counted per email or attachment, not per token: every share or listing issues a new token for it.
    const counted = await deps.countRequest(
      `${deps.redisPrefix}:ratelimit:link:${publicLinkIdentity(target.pathname)}`,
    );
    if (counted && counted.count > deps.perLinkPerSecond) {
      throw rateLimited(
        counted,
        `Too many requests for this link. It can be opened ${deps.perLinkPerSecond} times per second.`,
      );
    }
    const headers: Record<string, string> = {
      accept: req.header('accept') ?? '*/*',
      // Who asked, for the owner's record of opens and clicks: the caller's user agent, and its address
      // after any the proxy in front of us named.
      'user-agent': req.header('user-agent') ?? '',
      'x-forwarded-for': forwardedFor(req),
      // The host the link was asked for: a tracking token opens only on the host it was made for.
      'x-forwarded-host': req.header('host') ?? '',
    };
    let body: Buffer | undefined;
    if (req.method === 'POST') {
      body = await readPublicForm(req);
      headers['content-type'] = req.header('content-type') ?? '';
      const team = unsubscribeLinkTeam(target.pathname) ?? signupFormTeam(target.pathname);
      if (!(await linkTeamActive(deps, team, req.log))) throw notFound(PUBLIC_LINK_GONE);
    }
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(target, { dispatcher: agent, method: req.method as 'GET', headers, body });
    } catch (err) {
      const code = networkCode(err);
      if (code === undefined) throw err;
      req.log.error({ err, owner, code }, 'owner did not answer');
      throw ownerUnavailable();
    }
    if (response.statusCode < 400) {
      let active = false;
      try {
        active = await linkTeamActive(deps, response.headers[TEAM_HEADER], req.log);
      } finally {
        if (!active) await response.body.dump(); // reads off a short answer to keep the connection, cuts a long one
      }
      if (!active) throw notFound(PUBLIC_LINK_GONE); // the owner's own answer to an expired link
    }
    res.status(response.statusCode);
    for (const name of PUBLIC_ANSWER_HEADERS) {
      const value = response.headers[name];
      if (value !== undefined) res.setHeader(name, value);
    }
    await pipeline(response.body, res).catch((err: unknown) => req.log.warn({ err, owner }, 'public answer cut short'));
  }
}

/**
 * A hosted form's submit past its limits (per client address, then per form) is refused with 429 before the
 * owner sees it. The address is `req.ip`: the peer's, or behind TRUSTED_PROXY_HOPS proxies the one they saw.
 */
async function limitFormSubmit(deps: PublicForwardDeps, req: Request, target: URL): Promise<void> {
  const publicId = signupFormPublicId(target.pathname);
  if (!deps.formSubmitLimit || publicId === undefined) return;
  const refused = await deps.formSubmitLimit(req.ip ?? 'unknown', publicId);
  if (!refused) return;
  const message =
    refused.limit === 'address'
      ? 'Too many signups were sent from your network in the last minute. Please wait a minute and try again.'
      : 'This form is taking too many signups right now. Please wait a minute and try again.';
  throw rateLimited({ count: 0, resetMs: refused.retryAfterMs }, message);
}

/** The x-forwarded-for the owner gets: the one that came in (from the proxy in front), then the peer. */
function forwardedFor(req: Request): string {
  const peer = req.socket.remoteAddress ?? '';
  const incoming = req.header('x-forwarded-for');
  return incoming ? `${incoming}, ${peer}` : peer;
}

/**
 * The form body of a public POST, read whole (at most UNSUBSCRIBE_BODY_LIMIT_BYTES, else 413): urlencoded
 * or multipart/form-data, as a browser's form and a mailbox provider's one-click POST send it; any other
 * type is refused (415).
 */
async function readPublicForm(req: Request): Promise<Buffer> {
  if (!req.is(PUBLIC_FORM_TYPES)) {
    throw new ApiError(
      415,
      'validation_error',
      'The body must be application/x-www-form-urlencoded or multipart/form-data.',
    );
  }
  const tooLarge = () =>
    bodyTooLarge(`The request body is too large: at most ${UNSUBSCRIBE_BODY_LIMIT_BYTES / 1024} KB.`);
  const length = req.header('content-length');
  if (length !== undefined && Number(length) > UNSUBSCRIBE_BODY_LIMIT_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > UNSUBSCRIBE_BODY_LIMIT_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Whether the team an owner named for a link has access; a missing name counts as none, an outage as a 503. */
async function linkTeamActive(
  deps: PublicForwardDeps,
  team: string | string[] | undefined,
  log: Logger,
): Promise<boolean> {
  if (typeof team !== 'string') return false;
  try {
    return await deps.teamActive(team);
  } catch (err) {
    log.error({ err }, 'could not read the team of a public link');
    throw ownerUnavailable();
  }
}

export function sendForwarded(res: Response, answer: Forwarded): void {
  try {
    // The log keeps JSON answers' bodies only.
    setLoggedResponseBody(res, /json/.test(answer.contentType) ? JSON.parse(answer.body.toString('utf8')) : null);
  } catch {
    setLoggedResponseBody(res, null);
  }
  res.status(answer.status).setHeader('content-type', answer.contentType);
  if (answer.disposition) res.setHeader('content-disposition', answer.disposition);
  res.end(answer.body);
}
