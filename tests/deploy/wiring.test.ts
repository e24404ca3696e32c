// The code and the deployment agree: each service's `Env` (services/<svc>/src/config.ts, the zod object
// whose keys are exactly the variables it reads) is fully set for that service in docker-compose.yml and
// in the k8s base, the values given there parse with that schema, and every port the code listens on by
// default is the port compose and k8s publish, probe and route to.
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import {
  HTTP_PORTS,
  SERVICES,
  containerEnv,
  findObject,
  loadCompose,
  loadYamlFile,
  onlyContainer,
  publishedContainerPort,
  renderKustomize,
  resolveContainerPort,
  type ComposeFile,
  type K8sObject,
  type ServiceName,
} from './manifests.ts';

type FieldSchema = { safeParse(value: unknown): { success: boolean; data?: unknown } };
type EnvSchema = FieldSchema & { shape: Record<string, FieldSchema> };

/** Ports a service listens on, by variable; MX_DELIVERY_PORT is dialled, not listened on. */
const LISTEN_PORT_VARS = ['API_PORT', 'HTTP_PORT', 'SMTP_MX_PORT', 'SMTP_RELAY_PORT', 'SMTP_RELAY_TLS_PORT'];
/** Of those, the ones reachable from outside (compose publishes them). */
const PUBLIC_PORT_VARS = ['API_PORT', 'SMTP_MX_PORT', 'SMTP_RELAY_PORT', 'SMTP_RELAY_TLS_PORT'];
/** Read by the code but deliberately left unset in k8s, where unset means the default. */
const UNSET_IN_K8S: Record<string, string> = {
  DNS_SERVERS: 'unset means the cluster resolvers',
  DATABASE_POOL_SIZE: "unset means each service's own pool; an overlay sets it with replicas",
  SMTP_TLS_CERT: 'unset means a self-signed certificate; an overlay points it at the postline-smtp-tls Secret',
  SMTP_TLS_KEY: 'unset means a self-signed certificate; an overlay points it at the postline-smtp-tls Secret',
  DASHBOARD_MAIL_FROM: "unset means the dashboard's links are shown to the admin; an overlay sets the operator's",
  DASHBOARD_MAIL_TEAM_ID: "unset means the dashboard's links are shown to the admin; an overlay sets the operator's",
  SHAPING_CONFIG: 'unset means the default traffic-shaping limits; an overlay mounts a file and names it',
};
/**
 * The runtime contract (docs/configuration.md) plus SERVICE (deploy/entrypoint.sh): names compose and k8s may
 * set before any service reads them. Anything else set there must be read by some service.
 */
const CONTRACT_VARS = new Set([
  'DATABASE_URL',
  'AMQP_URL',
  'REDIS_URL',
  'BROKER_PREFIX',
  'REDIS_PREFIX',
  'API_PORT',
  'PUBLIC_BASE_URL',
  'SMTP_MX_PORT',
  'SMTP_RELAY_PORT',
  'SMTP_RELAY_TLS_PORT',
  'MX_DELIVERY_PORT',
  'DNS_SERVERS',
  'POSTLINE_SECRET_KEY',
  'POSTLINE_DELAY_SCALE',
  'RATE_LIMIT_PER_SECOND',
  'ALLOW_PRIVATE_NETWORK_TARGETS',
  'LOG_LEVEL',
  'NODE_ENV',
  'SHUTDOWN_TIMEOUT_MS',
  'HTTP_PORT',
  'SERVICE',
]);

const SECRET_KEY = 'wiring-test-secret-key-0123456789';

async function loadEnvSchema(name: ServiceName): Promise<EnvSchema> {
  const mod = (await import(`../../services/${name}/src/config.ts`)) as { Env?: EnvSchema };
  if (!mod.Env?.shape) throw new Error(`services/${name}/src/config.ts does not export a zod object named Env`);
  return mod.Env;
}

function defaultOf(env: EnvSchema, key: string): unknown {
  const parsed = env.shape[key]?.safeParse(undefined);
  return parsed?.success ? parsed.data : undefined;
}

/** What the process sees: every value a string, variables without a value absent. */
function asProcessEnv(env: Map<string, unknown> | Record<string, unknown>): Record<string, string> {
  const entries = env instanceof Map ? [...env.entries()] : Object.entries(env);
  return Object.fromEntries(entries.filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, String(v)]));
}

function parseErrors(schema: EnvSchema, env: Record<string, string>): unknown {
  const result = schema.safeParse(env) as { success: boolean; error?: { issues: unknown[] } };
  return result.success ? [] : result.error?.issues;
}

let schemas: Map<ServiceName, EnvSchema>;
let compose: ComposeFile;
let objects: K8sObject[];
let secret: ISecret;
beforeAll(async () => {
  schemas = new Map();
  for (const name of SERVICES) schemas.set(name, await loadEnvSchema(name));
  compose = loadCompose({ POSTLINE_SECRET_KEY: SECRET_KEY });
  objects = renderKustomize();
  secret = loadYamlFile<ISecret>('k8s/secret.example.yaml');
});

const schemaOf = (name: ServiceName) => schemas.get(name) as EnvSchema;
const keysOf = (name: ServiceName) => Object.keys(schemaOf(name).shape);
const composeEnv = (name: ServiceName) => compose.services[name]?.environment ?? {};
const k8sContainer = (name: ServiceName) => onlyContainer(findObject<IDeployment>(objects, 'Deployment', name));
const k8sEnv = (name: ServiceName) => containerEnv(k8sContainer(name), objects, [secret]);

describe.each(SERVICES)('%s wiring', (name) => {
  it('sets every variable the service reads in compose, with values its schema accepts', () => {
    const env = composeEnv(name);
    expect(keysOf(name).filter((k) => !(k in env))).toEqual([]);
    expect(parseErrors(schemaOf(name), asProcessEnv(env))).toEqual([]);
  });

  it('sets every variable the service reads in k8s, with values its schema accepts', () => {
    const env = k8sEnv(name);
    expect(keysOf(name).filter((k) => !env.has(k) && !(k in UNSET_IN_K8S))).toEqual([]);
    expect(parseErrors(schemaOf(name), asProcessEnv(env))).toEqual([]);
  });

  it('listens, by default, on the ports compose and k8s use for it', () => {
    const schema = schemaOf(name);
    const portVars = LISTEN_PORT_VARS.filter((k) => k in schema.shape);
    const httpVar = 'HTTP_PORT' in schema.shape ? 'HTTP_PORT' : 'API_PORT';
    expect(portVars).toContain(httpVar);
    expect(defaultOf(schema, httpVar)).toBe(HTTP_PORTS[name]);

    const composeService = compose.services[name];
    const container = k8sContainer(name);
    const service = findObject<IService>(objects, 'Service', name);
    const env = k8sEnv(name);
    for (const key of portVars) {
      const port = defaultOf(schema, key) as number;
      expect([key, Number(composeEnv(name)[key])]).toEqual([key, port]);
      expect([key, Number(env.get(key))]).toEqual([key, port]);
      expect([key, container.ports?.some((p) => p.containerPort === port)]).toEqual([key, true]);
      const servicePort = service.spec?.ports?.find((p) => p.port === port);
      expect([key, resolveContainerPort(container, servicePort?.targetPort ?? port)]).toEqual([key, port]);
      if (PUBLIC_PORT_VARS.includes(key)) {
        expect([key, composeService?.ports?.map(publishedContainerPort)]).toEqual([
          key,
          expect.arrayContaining([port]),
        ]);
      }
    }

    const httpPort = defaultOf(schema, httpVar);
    expect(resolveContainerPort(container, container.livenessProbe?.httpGet?.port)).toBe(httpPort);
    expect(resolveContainerPort(container, container.readinessProbe?.httpGet?.port)).toBe(httpPort);
    expect(composeService?.healthcheck?.test.join(' ')).toContain(`http://127.0.0.1:${String(httpPort)}/healthz`);
  });

  it('points URLs of other services at their Service name and default HTTP port', () => {
    for (const owner of SERVICES) {
      const key = `${owner.toUpperCase().replaceAll('-', '_')}_URL`;
      if (!(key in schemaOf(name).shape)) continue;
      const ownerSchema = schemaOf(owner);
      const port = defaultOf(ownerSchema, 'HTTP_PORT' in ownerSchema.shape ? 'HTTP_PORT' : 'API_PORT') as number;
      expect([key, composeEnv(name)[key]]).toEqual([key, `http://${owner}:${port}`]);
      expect([key, k8sEnv(name).get(key)]).toEqual([key, `http://${owner}:${port}`]);
      expect(findObject<IService>(objects, 'Service', owner).spec?.ports?.map((p) => p.port)).toContain(port);
    }
  });
});

it('sets nothing in compose or k8s that is neither in the runtime contract nor read by a service', () => {
  const read = new Set(SERVICES.flatMap(keysOf));
  const set = new Set<string>();
  for (const name of SERVICES) {
    for (const k of Object.keys(composeEnv(name))) set.add(k);
    for (const k of k8sEnv(name).keys()) set.add(k);
  }
  expect([...set].filter((k) => !read.has(k) && !CONTRACT_VARS.has(k))).toEqual([]);
});
