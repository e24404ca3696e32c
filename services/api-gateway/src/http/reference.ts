import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';
import { notFound } from '@postline/platform';

/** Where the reference page is served, and its renderer's assets under it. */
export const DOCS_PATH = '/docs';
const ASSETS_PATH = `${DOCS_PATH}/assets`;

/** Scalar's browser bundle (standalone.js and the chunks it loads beside it), served from node_modules. */
const SCALAR_BROWSER_DIR = join(dirname(fileURLToPath(import.meta.resolve('@scalar/api-reference'))), 'browser');

/**
 * Nothing the page loads may come from elsewhere: self-hosted installs are often offline, and the page's
 * renderer would otherwise fetch fonts and offer third-party services.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// The renderer's options: no fonts from its CDN, no telemetry, no hosted client or AI agent.
const SCALAR_CONFIG = {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  documentDownloadType: 'both',
};

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Postline API reference</title>
  </head>
  <body>
    <script id="api-reference" data-configuration="${JSON.stringify(SCALAR_CONFIG).replaceAll('"', '&quot;')}"></script>
    <script src="${ASSETS_PATH}/standalone.js"></script>
  </body>
</html>
`;

/** The OpenAPI document, built from the contracts (the one source of the routes) by a module loaded on first use. */
async function document(): Promise<object> {
  const { openApiDocument } = await import('@postline/contracts/openapi');
  return openApiDocument();
}

/**
 * The API's OpenAPI document (`/openapi.json`, `/openapi.yaml`) and its browsable reference page (`/docs`),
 * served without an API key. The document is built once, when first asked, from the contracts.
 */
export function referenceRoutes(): Router {
  const router = Router();
  // Each text is made on its first request, not at start-up: the YAML alone takes about a second of CPU,
  // which every gateway start (a deploy, a scale-up, a restart after a crash) would otherwise pay; and the
  // modules that make them (every operation's schemas, the YAML writer: about 10 MB of heap) are loaded
  // then too, so that a gateway nobody asks for its document never holds them.
  let json: Promise<string> | undefined;
  let yaml: Promise<string> | undefined;
  router.get('/openapi.json', async (_req, res) => {
    json ??= document().then((doc) => JSON.stringify(doc));
    const text = await json;
    res.type('application/json').setHeader('cache-control', 'no-cache').send(text);
  });
  router.get(['/openapi.yaml', '/openapi.yml'], async (_req, res) => {
    yaml ??= Promise.all([document(), import('yaml')]).then(([doc, { stringify }]) =>
      stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 }),
    );
    const text = await yaml;
    res.type('application/yaml').setHeader('cache-control', 'no-cache').send(text);
  });
  router.get([DOCS_PATH, `${DOCS_PATH}/`], (_req, res) => {
    res.setHeader('content-security-policy', DOCS_CSP);
    res.type('text/html; charset=utf-8').send(PAGE);
  });
  router.use(
    ASSETS_PATH,
    express.static(SCALAR_BROWSER_DIR, {
      index: false,
      maxAge: '1d',
      setHeaders: (res) => res.setHeader('x-content-type-options', 'nosniff'),
    }),
  );
  // An asset that is not there is not an API route: answered here, not passed on to authentication.
  router.use(ASSETS_PATH, () => {
    throw notFound('Not found');
  });
  return router;
}
