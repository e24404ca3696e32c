import { Router, type Request, type Response } from 'express';
import { PUBLIC_LINK_GONE } from '@postline/contracts';
import { notFound, route, setPublicLinkHeaders } from '@postline/platform';
import { TRACKING_PATHS, type TrackingKind } from '../domain/tracking-links.ts';
import { openTrackingLink, type TrackingDeps } from '../use-cases/record-engagement.ts';

/** A 1×1 transparent GIF (42 bytes). */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/**
 * The open pixel (`/o/{token}`) and the click redirect (`/c/{token}`), reached through the gateway without
 * a key on any host (each domain's tracking host is a CNAME to ours). The sealed token alone names the email
 * and the URL, so the answer goes at once, after one cached read of the email's team (for the gateway's
 * disabled-team check); the hit is handed to the recorder afterwards. A token that is not ours, edited, or
 * of the other kind answers 404 and redirects nowhere.
 */
export function trackingRoutes(deps: TrackingDeps): Router {
  const router = Router();

  route(router, `${TRACKING_PATHS.open}/:token`, {
    get: async (req, res) => {
      const opened = await openTrackingLink(deps, req.params.token ?? '', 'open', trackingHostOf(req));
      if (!opened) throw notFound(PUBLIC_LINK_GONE);
      trackingHeaders(res, opened.teamId);
      res.status(200).type('image/gif').setHeader('content-length', String(PIXEL.length));
      if (req.method === 'HEAD') res.end();
      else res.end(PIXEL);
      recordHit(deps, req, 'open', opened.link.emailId, opened.teamId, null);
    },
  });

  route(router, `${TRACKING_PATHS.click}/:token`, {
    get: async (req, res) => {
      const opened = await openTrackingLink(deps, req.params.token ?? '', 'click', trackingHostOf(req));
      if (!opened || !isWebUrl(opened.link.url)) throw notFound(PUBLIC_LINK_GONE);
      trackingHeaders(res, opened.teamId);
      res.status(302).setHeader('location', new URL(opened.link.url!).href);
      res.setHeader('content-length', '0').end();
      recordHit(deps, req, 'click', opened.link.emailId, opened.teamId, opened.link.url);
    },
  });
  return router;
}

function recordHit(
  deps: TrackingDeps,
  req: Request,
  kind: TrackingKind,
  emailId: string,
  teamId: string,
  url: string | null,
): void {
  deps.recorder.record({
    kind,
    emailId,
    teamId,
    url,
    ip: clientAddress(req),
    userAgent: req.header('user-agent') ?? '',
    method: req.method,
    at: new Date(),
  });
}

/** The host the link was requested on, as the gateway passed it (x-forwarded-host), else this request's. */
function trackingHostOf(req: Request): string {
  return req.header('x-forwarded-host') ?? req.header('host') ?? '';
}

/** The client's address as the gateway passed it (the first of x-forwarded-for), else the socket's. */
function clientAddress(req: Request): string {
  const forwarded = req.header('x-forwarded-for')?.split(',')[0]?.trim();
  return forwarded || req.socket.remoteAddress || '';
}

/** Only http(s) links are sealed; anything else a token could name is refused rather than redirected to. */
function isWebUrl(url: string | null): boolean {
  if (url === null) return false;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:';
  } catch {
    return false;
  }
}

/** The team for the gateway (which checks it and never passes it on); never cached, never indexed. */
function trackingHeaders(res: Response, teamId: string): void {
  setPublicLinkHeaders(res, { teamId, cacheControl: 'private, no-store, no-cache, max-age=0' });
}
