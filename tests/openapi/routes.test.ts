// The routes and the OpenAPI document come from one source: every route an owner or the gateway mounts is an
// operation of the catalog in @postline/contracts, and every operation is mounted by the service the
// gateway forwards its path to. A route added without its operation (or the reverse) fails here.
import { describe, expect, it } from '@jest/globals';
import express, { type Express, type Router } from 'express';
import { OPERATIONS, openApiDocument, pathParams } from '@postline/contracts/openapi';
import { gatewayHttp } from '../../services/api-gateway/src/http/app.ts';
import { ownerOf, publicRouteOf, type Owner } from '../../services/api-gateway/src/domain/routes.ts';
import { internalRoutes as domainVerifierRoutes } from '../../services/domain-verifier/src/http/routes.ts';
import { internalRoutes as inboundRoutes } from '../../services/inbound-smtp/src/http/routes.ts';
import { internalRoutes as senderRoutes } from '../../services/sender/src/http/routes.ts';
import { internalRoutes as webhookRoutes } from '../../services/webhook-dispatcher/src/http/routes.ts';

/** Stands in for any dependency: routers are built, never called, so a dependency only has to exist. */
const stand: object = new Proxy(function () {}, {
  get: (_target, key) => (key === 'then' ? undefined : stand),
  apply: () => stand,
  construct: () => stand,
});
const anything = stand as never;

type Layer = {
  /** The path a router is mounted at (`app.use('/dashboard-api', router)`); `/` for none. */
  rawPath?: unknown;
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
};

/**
 * `METHOD /path/{}` of every route a router mounts, with the paths routers are mounted at (parameter names
 * dropped: owners name them freely).
 */
function mounted(router: { stack: Layer[] }, prefix = ''): string[] {
  const routes: string[] = [];
  for (const layer of router.stack) {
    if (layer.route) {
      const methods = Object.keys(layer.route.methods).filter((m) => m !== '_all');
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const method of methods)
        for (const path of paths) routes.push(`${method.toUpperCase()} ${shape(prefix + path)}`);
    } else if (layer.handle?.stack) {
      const at = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      routes.push(...mounted(layer.handle as { stack: Layer[] }, prefix + at));
    }
  }
  return routes;
}

function shape(path: string): string {
  return path.replace(/:[A-Za-z_]+/g, '{}').replace(/\{[^}]*\}/g, '{}');
}

const key = (op: { method: string; path: string }) => `${op.method.toUpperCase()} ${shape(op.path)}`;

const owners: Record<Owner, () => Router> = {
  sender: () => senderRoutes(anything),
  'inbound-smtp': () => inboundRoutes(anything),
  'webhook-dispatcher': () => webhookRoutes(anything),
  'domain-verifier': () => domainVerifierRoutes(anything),
};

function gatewayApp(): Express {
  const app = express();
  const http = gatewayHttp(anything);
  http.before(app);
  http.routes(app);
  return app;
}

/** The gateway's own routes that are not API operations: the document and its reference page. */
/** Pages for people, not API operations: the document, its reference page, and the dashboard's app. */
const DOCUMENTATION_ROUTES = [
  'GET /openapi.json',
  'GET /openapi.yaml',
  'GET /openapi.yml',
  'GET /docs',
  'GET /docs/',
  'GET /',
  'GET /dashboard',
  'GET /dashboard/{}',
];

/**
 * Routes for the deployment, not API operations (like /healthz): the TLS proxy's certificate ask on the
 * gateway, and the sender's answer to it, which the gateway asks and never forwards.
 */
const DEPLOYMENT_ROUTES = ['GET /internal/tls-ask', 'GET /tracking-hosts/{}'];

describe('the operation catalog and the mounted routes', () => {
  const catalog = new Set(OPERATIONS.map(key));
  const byOwner = Object.fromEntries(
    Object.entries(owners).map(([owner, build]) => [owner, new Set(mounted(build() as never))]),
  ) as Record<Owner, Set<string>>;
  const gateway = new Set(mounted((gatewayApp() as unknown as { router: { stack: Layer[] } }).router));

  it('holds each operation once', () => {
    expect(OPERATIONS.length).toBe(catalog.size);
  });

  it('documents every route an owner mounts', () => {
    const undocumented = Object.values(byOwner).flatMap((routes) =>
      [...routes].filter((r) => !catalog.has(r) && !DEPLOYMENT_ROUTES.includes(r)),
    );
    expect(undocumented).toEqual([]);
    expect(byOwner.sender.has('GET /tracking-hosts/{}')).toBe(true);
    // Asked by the gateway itself: no API request reaches it.
    expect(ownerOf('/tracking-hosts/links.example.com')).toBeUndefined();
  });

  it('documents every route the gateway serves itself', () => {
    const own = [...gateway].filter(
      (route) => !DOCUMENTATION_ROUTES.includes(route) && !DEPLOYMENT_ROUTES.includes(route),
    );
    expect(gateway.has('GET /internal/tls-ask')).toBe(true);
    expect(own.length).toBeGreaterThan(0);
    expect(own.filter((route) => !catalog.has(route))).toEqual([]);
    expect(DOCUMENTATION_ROUTES.filter((route) => !gateway.has(route))).toEqual([]);
  });

  it('mounts every keyed operation where the gateway sends it, and every public link on the gateway’s list', () => {
    const missing: string[] = [];
    for (const op of OPERATIONS) {
      if (op.auth === 'none') {
        const route = publicRouteOf(
          op.path.replace('{public_id}', 'F'.repeat(43)).replace('{token}', sampleToken(op.path)),
        );
        const owner = route?.owner;
        if (!route || !route.methods.includes(op.method.toUpperCase()) || !owner || !byOwner[owner].has(key(op))) {
          missing.push(`${key(op)} (public)`);
        }
        continue;
      }
      const owner = ownerOf(op.path.replace(/\{[^}]+\}/g, 'x'));
      const served = owner ? byOwner[owner].has(key(op)) : gateway.has(key(op));
      if (!served) missing.push(key(op));
    }
    expect(missing).toEqual([]);
  });

  it('gives every operation a non-empty success schema or a declared content type, and names its path parameters', () => {
    const doc = openApiDocument();
    for (const op of OPERATIONS) {
      const operation = doc.paths[op.path]?.[op.method] as { responses: Record<string, { content?: object }> };
      const success = operation.responses[String(op.success.status)];
      expect(success).toBeDefined();
      if (op.success.status !== 302) expect(Object.keys(success?.content ?? {})).not.toHaveLength(0);
      expect(new Set(pathParams(op.path)).size).toBe(pathParams(op.path).length);
    }
  });
});

/** A token of the shape the gateway's public route of this path takes. */
function sampleToken(path: string): string {
  if (path.startsWith('/unsubscribe/')) return `${'A'.repeat(64)}.${'B'.repeat(22)}`;
  if (path.startsWith('/o/') || path.startsWith('/c/')) return 'A'.repeat(60);
  if (path.startsWith('/f/')) return `${'A'.repeat(51)}.${'B'.repeat(22)}`;
  return 'AAAA.BBBB';
}
