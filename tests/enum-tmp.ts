import type { Router } from 'express';
import { internalRoutes as sender } from '../services/sender/src/http/routes.ts';
import { internalRoutes as dv } from '../services/domain-verifier/src/http/routes.ts';
import { internalRoutes as inbound } from '../services/inbound-smtp/src/http/routes.ts';
import { internalRoutes as wh } from '../services/webhook-dispatcher/src/http/routes.ts';
import { apiKeyRoutes } from '../services/api-gateway/src/http/api-keys.ts';
import { logRoutes } from '../services/api-gateway/src/http/logs.ts';
import { relayRoutes } from '../services/api-gateway/src/http/relay.ts';
const deps: any = new Proxy({}, { get: () => deps });
function walk(r: any, out: string[]) {
  for (const layer of r.stack) {
    if (layer.route) {
      const methods = Object.keys(layer.route.methods).filter((m) => m !== '_all');
      if (methods.length) out.push(`${methods.join(',').toUpperCase()} ${layer.route.path}`);
    } else if (layer.handle?.stack) walk(layer.handle, out);
  }
}
for (const [n, f] of Object.entries({ sender, dv, inbound, wh, apiKeyRoutes, logRoutes, relayRoutes })) {
  const out: string[] = [];
  walk((f as any)(deps) as Router, out);
  console.log(n, '\n  ' + out.join('\n  '));
}
