// Loads the deployment artefacts the way their tools would see them: `kubectl kustomize k8s/` for the
// Kubernetes base, and docker-compose.yml parsed (YAML merge keys on) and interpolated like Compose does.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { SERVICE_NAMES, type ServiceName } from '@postline/contracts';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { ISecret } from 'kubernetes-models/v1/Secret';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export const SERVICES = SERVICE_NAMES;
export type { ServiceName };

/** The ports the runtime contract gives each service by default (HTTP_PORT, or API_PORT for the gateway). */
export const HTTP_PORTS: Record<ServiceName, number> = {
  'api-gateway': 3000,
  sender: 3101,
  'inbound-smtp': 3102,
  'webhook-dispatcher': 3103,
  scheduler: 3104,
  'domain-verifier': 3105,
};
export const SMTP_PORTS = { SMTP_MX_PORT: 2525, SMTP_RELAY_PORT: 2587, SMTP_RELAY_TLS_PORT: 2465 } as const;

export function readRepoFile(path: string): string {
  return readFileSync(join(repoRoot, path), 'utf8');
}

// ---------------------------------------------------------------------------------------------- k8s

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
};

/** Renders the kustomize base exactly as `kubectl apply -k k8s/` would send it. */
export function renderKustomize(dir = 'k8s'): K8sObject[] {
  return renderDir(join(repoRoot, dir), dir);
}

/**
 * Renders an overlay of the base with kustomize components of the repository (`k8s/keda`), as an overlay
 * naming them in `components:` would (kustomize takes only relative paths, so it is written in a temporary
 * directory with paths back to the repository).
 */
export function renderWithComponents(components: string[], base = 'k8s'): K8sObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'postline-overlay-'));
  try {
    const path = (p: string) => relative(dir, join(repoRoot, p));
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        `  - ${path(base)}`,
        'components:',
        ...components.map((c) => `  - ${path(c)}`),
        '',
      ].join('\n'),
    );
    return renderDir(dir, `${base} with ${components.join(', ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function renderDir(path: string, dir: string): K8sObject[] {
  let out: string;
  try {
    out = execFileSync('kubectl', ['kustomize', path], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT')
      throw new Error('kubectl is not on PATH: the deploy tests render k8s/ with `kubectl kustomize`');
    throw new Error(`kubectl kustomize ${dir} failed: ${e.stderr ?? e.message}`);
  }
  return parseAllDocuments(out).map((doc) => doc.toJS() as K8sObject);
}

export function loadYamlFile<T>(path: string): T {
  return parse(readRepoFile(path), { merge: true }) as T;
}

export function findObject<T>(objects: K8sObject[], kind: string, name: string): T {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected exactly one ${kind} ${name}, found ${found.length}`);
  return found[0] as T;
}

export function onlyContainer(deployment: IDeployment): IContainer {
  const containers = deployment.spec?.template.spec?.containers ?? [];
  if (containers.length !== 1) throw new Error(`${deployment.metadata?.name}: expected one container`);
  return containers[0] as IContainer;
}

/** A container port given by number or by name, as probes, Services and NetworkPolicies may. */
export function resolveContainerPort(container: IContainer, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/**
 * The environment a container starts with: ConfigMaps and Secrets from envFrom (looked up in `objects`,
 * or in `secrets` for Secrets that live outside the base), then `env`, which wins.
 */
export function containerEnv(
  container: IContainer,
  objects: K8sObject[],
  secrets: ISecret[],
): Map<string, string | undefined> {
  const env = new Map<string, string | undefined>();
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const cm = findObject<{ data?: Record<string, string> }>(objects, 'ConfigMap', source.configMapRef.name ?? '');
      for (const [k, v] of Object.entries(cm.data ?? {})) env.set(k, v);
    }
    if (source.secretRef) {
      const secret = secrets.find((s) => s.metadata?.name === source.secretRef?.name);
      if (!secret) throw new Error(`no Secret ${source.secretRef.name} known`);
      for (const k of Object.keys({ ...secret.data, ...secret.stringData })) env.set(k, secret.stringData?.[k]);
    }
  }
  for (const e of container.env ?? []) env.set(e.name, e.value);
  return env;
}

// ------------------------------------------------------------------------------------------ compose

export type ComposeService = {
  image?: string;
  build?: { context: string; dockerfile?: string };
  environment?: Record<string, string | number | boolean | null>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
  restart?: string;
};
export type ComposeFile = { services: Record<string, ComposeService> } & Record<string, unknown>;

const VARIABLE = /\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/**
 * Compose's variable substitution on one value: `$$`, `$VAR`, `${VAR}`, `${VAR:-default}`,
 * `${VAR-default}`, `${VAR:?error}` and `${VAR?error}` (the forms docker-compose.yml uses).
 */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(VARIABLE, (match, braced?: string, op?: string, arg?: string, bare?: string) => {
    if (match === '$$') return '$';
    const name = (braced ?? bare) as string;
    const v = env[name];
    const missing = op?.startsWith(':') ? v === undefined || v === '' : v === undefined;
    if (op?.endsWith('?') && missing) throw new Error(`required variable ${name} is missing a value: ${arg ?? ''}`);
    if (op?.endsWith('-') && missing) return arg ?? '';
    return v ?? '';
  });
}

function interpolateDeep(node: unknown, env: Record<string, string | undefined>): unknown {
  if (typeof node === 'string') return interpolate(node, env);
  if (Array.isArray(node)) return node.map((n) => interpolateDeep(n, env));
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolateDeep(v, env)]));
  }
  return node;
}

/** docker-compose.yml as `docker compose config` sees it: anchors merged, variables substituted from `env`. */
export function loadCompose(env: Record<string, string | undefined>): ComposeFile {
  return interpolateDeep(loadYamlFile<unknown>('docker-compose.yml'), env) as ComposeFile;
}

/** A Compose duration ("15s", "1m30s", "500ms") in milliseconds. */
export function durationMs(duration: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== duration) throw new Error(`bad duration ${duration}`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * (units[p[2] as string] ?? NaN), 0);
}

/** The container port of a published "HOST:CONTAINER[/proto]" mapping. */
export function publishedContainerPort(mapping: string): number {
  const container = mapping.split('/')[0]?.split(':').at(-1);
  return Number(container);
}
