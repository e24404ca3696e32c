import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router, type Request } from 'express';
import { notFound } from '@postline/platform';

/** Where the dashboard's pages are served on the API port. */
export const DASHBOARD_PATH = '/dashboard';
const ASSETS_PATH = `${DASHBOARD_PATH}/assets`;

/** The dashboard's built single-page app (web/dashboard, `vite build`): index.html and hashed assets. */
export const DASHBOARD_DIST = join(
  dirname(fileURLToPath(import.meta.resolve('@postline/dashboard/package.json'))),
  'dist',
);

/**
 * The app loads only from the gateway (installs are often offline, and a dashboard holding API keys must not
 * run anyone else's script). Inline style attributes are allowed for charts' sizes; inline scripts are not.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "style-src-attr 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  // An email's preview: its share page on this origin, itself sandboxed (no scripts, an origin of its own).
  "frame-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Postline</title></head>
<body><h1>The dashboard is not built</h1>
<p>Run <code>npm start</code> (it builds the dashboard when missing), or <code>pnpm --filter @postline/dashboard build</code>.</p>
</body></html>
`;

/** Whether a request is a person's browser opening a page (not a program calling the API). */
function wantsPage(req: Request): boolean {
  return !req.headers.authorization && req.accepts(['application/json', 'text/html']) === 'text/html';
}

/**
 * The dashboard under /dashboard/ on the API port: its hashed assets cached for good, every other path the
 * app's index.html (the app routes in the browser). A browser opening the API's root is sent there; a client
 * without a key still gets the API's JSON error.
 */
export function dashboardAppRoutes(dist = DASHBOARD_DIST): Router {
  // Strict: else `/dashboard/` matches the `/dashboard` route too, and redirects to itself for ever.
  const router = Router({ strict: true });
  let index: string | null = null;
  const page = (): string | null => {
    if (index === null && existsSync(join(dist, 'index.html'))) index = readFileSync(join(dist, 'index.html'), 'utf8');
    return index;
  };
  const security = (res: express.Response) => {
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'same-origin');
    res.setHeader('x-frame-options', 'DENY');
  };

  router.get('/', (req, res, next) => {
    if (!wantsPage(req)) return next();
    res.redirect(302, `${DASHBOARD_PATH}/`);
  });
  router.use(
    ASSETS_PATH,
    express.static(join(dist, 'assets'), {
      index: false,
      immutable: true,
      maxAge: '365d',
      setHeaders: (res) => security(res),
    }),
  );
  // An asset that is not there is not an API route: answered here, not passed on to authentication.
  router.use(ASSETS_PATH, () => {
    throw notFound('Not found');
  });
  router.get([DASHBOARD_PATH, `${DASHBOARD_PATH}/{*rest}`], (req, res) => {
    // The app's links are relative to /dashboard/, so the bare path is sent there.
    if (new URL(req.originalUrl, 'http://x').pathname === DASHBOARD_PATH) {
      res.redirect(301, `${DASHBOARD_PATH}/`);
      return;
    }
    security(res);
    res.setHeader('content-security-policy', DASHBOARD_CSP);
    res.setHeader('cache-control', 'no-cache');
    const html = page();
    res
      .status(html ? 200 : 503)
      .type('text/html; charset=utf-8')
      .send(html ?? NOT_BUILT);
  });
  return router;
}
