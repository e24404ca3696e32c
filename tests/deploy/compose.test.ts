// docker-compose.yml: valid against the Compose Specification's JSON schema after interpolation, and
// wired as the stack needs (health-gated start order, one image, only the public ports published, Caddy in
// front of the gateway with the committed Caddyfile).
//
// Schema source: compose-spec's schema/compose-spec.json as shipped by the `dclint` npm package (Docker
// Compose linter) at dclint/schemas/compose.schema.json; it is a draft-07 schema.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import {
  HTTP_PORTS,
  SERVICES,
  SMTP_PORTS,
  durationMs,
  interpolate,
  loadCompose,
  publishedContainerPort,
  readRepoFile,
  type ComposeFile,
} from './manifests.ts';

const ENV = { POSTLINE_SECRET_KEY: 'compose-test-secret-key-0123456789' };

function composeValidator() {
  const require = createRequire(import.meta.url);
  const path = join(dirname(require.resolve('dclint/package.json')), 'schemas', 'compose.schema.json');
  // `$schema` names draft-07 by an https URL ajv does not know; ajv's default dialect is draft-07 anyway.
  const { $schema, ...schema } = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  expect($schema).toMatch(/draft-07/);
  expect(schema.title).toBe('Compose Specification');
  // Unknown keywords stay errors (every keyword must be understood); the upstream schema's loose typing
  // style (additionalProperties next to a oneOf of types) is not ours to fix.
  const ajv = new Ajv({
    allErrors: true,
    strictSchema: true,
    strictTypes: false,
    strictTuples: false,
    allowUnionTypes: true,
  });
  return ajv.compile(schema);
}

function healthcheckPort(test: string[] | undefined): number | undefined {
  const url = /http:\/\/127\.0\.0\.1:(\d+)\/healthz/.exec(test?.join(' ') ?? '');
  return url ? Number(url[1]) : undefined;
}

describe('docker-compose.yml', () => {
  const compose: ComposeFile = loadCompose(ENV);

  it('is valid against the Compose Specification schema', () => {
    const validate = composeValidator();
    const valid = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    // The schema really bites: an unknown key and an unknown depends_on condition are refused.
    expect(validate({ services: { x: { image: 'a', helthcheck: {} } } })).toBe(false);
    expect(validate({ services: { x: { image: 'a', depends_on: { y: { condition: 'service_ready' } } } } })).toBe(
      false,
    );
  });

  it('refuses to start without POSTLINE_SECRET_KEY', () => {
    expect(() => loadCompose({})).toThrow(/POSTLINE_SECRET_KEY/);
    expect(() => loadCompose({ POSTLINE_SECRET_KEY: '' })).toThrow(/POSTLINE_SECRET_KEY/);
    expect(compose.services.sender?.environment?.POSTLINE_SECRET_KEY).toBe(ENV.POSTLINE_SECRET_KEY);
  });

  it('substitutes variables like Compose does', () => {
    expect(interpolate('${A:-x} ${B-y} $C $$D', { A: '', B: '', C: 'c' })).toBe('x  c $D');
    expect(() => interpolate('${A?needed}', {})).toThrow(/A is missing a value: needed/);
    expect(interpolate('${A:?needed}', { A: 'a' })).toBe('a');
  });

  it('runs postgres 17, rabbitmq 4 and redis 7, each with a healthcheck', () => {
    expect(compose.services.postgres?.image).toBe('postgres:17');
    expect(compose.services.rabbitmq?.image).toBe('rabbitmq:4-management');
    expect(compose.services.redis?.image).toBe('redis:7');
    for (const name of ['postgres', 'rabbitmq', 'redis']) {
      expect(compose.services[name]?.healthcheck?.test.length).toBeGreaterThan(0);
    }
  });

  it('migrates once, after postgres is healthy, from the same image as the services', () => {
    const migrate = compose.services.migrate;
    expect(migrate?.environment?.SERVICE).toBe('migrate');
    expect(migrate?.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(migrate?.restart).toBe('no');
    expect(migrate?.build).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile' });
  });

  describe.each(SERVICES)('%s', (name) => {
    const service = compose.services[name];
    const httpPort = HTTP_PORTS[name];

    it('is built from deploy/Dockerfile as the one shared image, with SERVICE selecting it', () => {
      expect(service?.build).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile' });
      expect(service?.image).toBe(compose.services.migrate?.image);
      expect(service?.environment?.SERVICE).toBe(name);
    });

    it('starts after migrations succeeded and the broker and Redis are healthy', () => {
      expect(service?.depends_on).toMatchObject({
        migrate: { condition: 'service_completed_successfully' },
        rabbitmq: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
    });

    it('checks its health on /healthz at the port it listens on', () => {
      const portVar = name === 'api-gateway' ? 'API_PORT' : 'HTTP_PORT';
      expect(Number(service?.environment?.[portVar])).toBe(httpPort);
      expect(healthcheckPort(service?.healthcheck?.test)).toBe(httpPort);
    });

    it('keeps its compiled modules on the compile-cache volume every Postline container shares', () => {
      const cacheDir = /^ENV NODE_COMPILE_CACHE=(\S+)$/m.exec(readRepoFile('deploy/Dockerfile'))?.[1];
      expect(cacheDir).toBe('/tmp/node-compile-cache');
      expect(service?.volumes).toContain(`node-compile-cache:${cacheDir}`);
      expect(compose.services.migrate?.volumes).toContain(`node-compile-cache:${cacheDir}`);
      expect(Object.keys(compose.volumes as object)).toContain('node-compile-cache');
    });

    it('is given longer to stop than SHUTDOWN_TIMEOUT_MS', () => {
      const shutdownMs = Number(service?.environment?.SHUTDOWN_TIMEOUT_MS);
      expect(shutdownMs).toBeGreaterThan(0);
      expect(durationMs(service?.stop_grace_period ?? '10s')).toBeGreaterThan(shutdownMs);
    });
  });

  it('publishes only Caddy, the SMTP listeners, and the API on the loopback', () => {
    const published = Object.entries(compose.services)
      .filter(([, s]) => s.ports?.length)
      .map(([name, s]) => [name, s.ports?.map(publishedContainerPort)]);
    expect(published).toEqual([
      ['api-gateway', [HTTP_PORTS['api-gateway']]],
      ['caddy', [80, 443]],
      ['inbound-smtp', Object.values(SMTP_PORTS)],
    ]);
    // The gateway trusts one proxy's X-Forwarded-For: only this machine may reach it past Caddy.
    expect(compose.services['api-gateway']?.ports).toEqual([`127.0.0.1:3000:${HTTP_PORTS['api-gateway']}`]);
  });

  describe('caddy', () => {
    const caddy = compose.services.caddy;

    it('runs the committed Caddyfile before the gateway, with its certificates on a volume', () => {
      expect(caddy?.image).toMatch(/^caddy:2(\.|$)/);
      expect(caddy?.volumes).toEqual(
        expect.arrayContaining(['./deploy/Caddyfile:/etc/caddy/Caddyfile:ro', 'caddy-data:/data']),
      );
      expect(Object.keys(compose.volumes as object)).toContain('caddy-data');
      expect(caddy?.environment?.POSTLINE_GATEWAY).toBe(`api-gateway:${HTTP_PORTS['api-gateway']}`);
      expect(caddy?.environment?.CADDY_CERT_ISSUER).toBe('acme');
      expect(caddy?.depends_on).toEqual({ 'api-gateway': { condition: 'service_healthy' } });
    });

    it('is the one proxy the gateway trusts in X-Forwarded-For', () => {
      expect(compose.services['api-gateway']?.environment?.TRUSTED_PROXY_HOPS).toBe('1');
    });

    it('asks the gateway before a certificate, serves everything else through it, and keeps /internal/ in', () => {
      const caddyfile = readRepoFile('deploy/Caddyfile');
      expect(caddyfile).toContain('ask http://{$POSTLINE_GATEWAY:api-gateway:3000}/internal/tls-ask');
      expect(caddyfile).toMatch(/tls \{\s*on_demand\s*\}/);
      expect(caddyfile).toContain('reverse_proxy {$POSTLINE_GATEWAY:api-gateway:3000}');
      expect(caddyfile).toMatch(/handle \/internal\/\* \{[^}]*respond [^\n]* 404/);
      // The same file in the k8s base (kustomize reads files only under k8s/).
      expect(readRepoFile('k8s/caddy/Caddyfile')).toBe(caddyfile);
    });
  });

  it('gives inbound-smtp the gateway for its SMTP relay, and no SMTP certificate unless the shell names one', () => {
    const env = compose.services['inbound-smtp']?.environment ?? {};
    expect(env.API_GATEWAY_URL).toBe(`http://api-gateway:${HTTP_PORTS['api-gateway']}`);
    // Unset (null): a self-signed pair generated at start.
    expect(env).toMatchObject({ SMTP_TLS_CERT: null, SMTP_TLS_KEY: null });
  });

  it('points the gateway at each owner by its compose name and HTTP port', () => {
    const env = compose.services['api-gateway']?.environment ?? {};
    expect(env).toMatchObject({
      SENDER_URL: `http://sender:${HTTP_PORTS.sender}`,
      INBOUND_SMTP_URL: `http://inbound-smtp:${HTTP_PORTS['inbound-smtp']}`,
      WEBHOOK_DISPATCHER_URL: `http://webhook-dispatcher:${HTTP_PORTS['webhook-dispatcher']}`,
      DOMAIN_VERIFIER_URL: `http://domain-verifier:${HTTP_PORTS['domain-verifier']}`,
    });
  });
});
