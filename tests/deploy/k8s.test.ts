// The kustomize base rendered by `kubectl kustomize k8s/`: every object valid against the Kubernetes
// schemas (kubernetes-models), the shape every service needs, and NetworkPolicies that keep the internal
// HTTP ports internal.
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IPersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import {
  HTTP_PORTS,
  SERVICES,
  SMTP_PORTS,
  containerEnv,
  findObject,
  loadYamlFile,
  onlyContainer,
  readRepoFile,
  renderKustomize,
  resolveContainerPort,
  type K8sObject,
} from './manifests.ts';
import { ingressAllowed, policiesSelecting, selectorMatches, type Peer, type TargetPod } from './network-policy.ts';

type Validatable = { validate(): void };

/** kubernetes-models has one module per kind: `kubernetes-models/<apiVersion>/<kind>` exporting the class. */
async function modelFor(obj: K8sObject): Promise<Validatable> {
  const mod = (await import(`kubernetes-models/${obj.apiVersion}/${obj.kind}`)) as Record<
    string,
    new (data: unknown) => Validatable
  >;
  const Model = mod[obj.kind];
  if (!Model) throw new Error(`kubernetes-models has no ${obj.apiVersion} ${obj.kind}`);
  return new Model(obj);
}

let objects: K8sObject[];
let secret: ISecret;
beforeAll(() => {
  objects = renderKustomize();
  secret = loadYamlFile<ISecret>('k8s/secret.example.yaml');
});

const deployment = (name: string) => findObject<IDeployment>(objects, 'Deployment', name);
const podLabels = (d: IDeployment) => d.spec?.template.metadata?.labels ?? {};

describe('k8s base', () => {
  it('renders only objects that are valid against the Kubernetes schemas', async () => {
    expect(objects.length).toBeGreaterThan(0);
    const invalid: string[] = [];
    for (const obj of objects) {
      try {
        (await modelFor(obj)).validate();
      } catch (err) {
        invalid.push(`${obj.kind}/${obj.metadata.name}: ${(err as Error).message}`);
      }
    }
    expect(invalid).toEqual([]);
  });

  it('ships a Secret template that is valid but keeps the Secret itself out of the base', async () => {
    await expect(modelFor(secret as K8sObject).then((m) => m.validate())).resolves.toBeUndefined();
    expect(secret.metadata?.name).toBe('postline-secrets');
    expect(Object.keys(secret.stringData ?? {})).toContain('POSTLINE_SECRET_KEY');
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
  });

  it('is namespace-less and labels every object and pod as part of postline', () => {
    for (const obj of objects) {
      expect(obj.metadata).not.toHaveProperty('namespace');
      expect(obj.metadata.labels?.['app.kubernetes.io/part-of']).toBe('postline');
      expect(obj.metadata.labels?.['app.kubernetes.io/name']).toEqual(expect.any(String));
    }
    for (const d of objects.filter((o) => o.kind === 'Deployment') as IDeployment[]) {
      expect(podLabels(d)).toMatchObject({ 'app.kubernetes.io/part-of': 'postline' });
      expect(selectorMatches(d.spec?.selector, podLabels(d))).toBe(true);
    }
  });

  describe.each(SERVICES)('%s', (name) => {
    const httpPort = HTTP_PORTS[name];

    it('has a Deployment whose probes use its HTTP port', () => {
      const container = onlyContainer(deployment(name));
      const live = container.livenessProbe?.httpGet;
      const ready = container.readinessProbe?.httpGet;
      expect(live?.path).toBe('/healthz');
      expect(ready?.path).toBe('/readyz');
      expect(resolveContainerPort(container, live?.port)).toBe(httpPort);
      expect(resolveContainerPort(container, ready?.port)).toBe(httpPort);
    });

    it('runs the image with SERVICE, the ConfigMap and the postline-secrets Secret', () => {
      const d = deployment(name);
      const container = onlyContainer(d);
      expect(container.image).toMatch(/^postline:/);
      expect(container.env).toContainEqual({ name: 'SERVICE', value: name });
      const refs = container.envFrom ?? [];
      const cm = refs.find((r) => r.configMapRef)?.configMapRef?.name;
      expect(objects.some((o) => o.kind === 'ConfigMap' && o.metadata.name === cm)).toBe(true);
      expect(refs.map((r) => r.secretRef?.name).filter(Boolean)).toEqual(['postline-secrets']);
      expect(refs.every((r) => !r.secretRef?.optional && !r.configMapRef?.optional)).toBe(true);
    });

    it('runs non-root on a read-only root filesystem with requests and limits', () => {
      const d = deployment(name);
      const pod = d.spec?.template.spec;
      const container = onlyContainer(d);
      expect(pod?.securityContext?.runAsNonRoot).toBe(true);
      expect(pod?.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      for (const kind of ['requests', 'limits'] as const) {
        expect(container.resources?.[kind]).toMatchObject({ cpu: expect.anything(), memory: expect.anything() });
      }
    });

    it('gives a graceful stop more time than SHUTDOWN_TIMEOUT_MS plus the preStop pause', () => {
      const d = deployment(name);
      const container = onlyContainer(d);
      const env = containerEnv(container, objects, [secret]);
      const shutdownMs = Number(env.get('SHUTDOWN_TIMEOUT_MS') ?? 10000);
      const preStop = container.lifecycle?.preStop?.exec?.command ?? [];
      const preStopMs = preStop[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
      expect((d.spec?.template.spec?.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThan(
        shutdownMs + preStopMs,
      );
    });

    it('has a Service exposing its HTTP port to the Deployment', () => {
      const svc = findObject<IService>(objects, 'Service', name);
      const container = onlyContainer(deployment(name));
      expect(svc.spec?.type ?? 'ClusterIP').toBe('ClusterIP');
      expect(selectorMatches({ matchLabels: svc.spec?.selector }, podLabels(deployment(name)))).toBe(true);
      const http = svc.spec?.ports?.find((p) => p.port === httpPort);
      expect(http).toBeDefined();
      expect(resolveContainerPort(container, http?.targetPort ?? httpPort)).toBe(httpPort);
    });

    it('has a CPU HorizontalPodAutoscaler on the Deployment and a PodDisruptionBudget for its pods', () => {
      const hpa = findObject<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler', name);
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      expect(hpa.spec?.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa.spec?.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.spec?.metrics).toContainEqual(
        expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }),
      );
      // The HPA owns the replica count; a fixed count would be reset on every apply.
      expect(deployment(name).spec?.replicas).toBeUndefined();

      const pdb = findObject<IPodDisruptionBudget>(objects, 'PodDisruptionBudget', name);
      expect(pdb.apiVersion).toBe('policy/v1');
      expect(selectorMatches(pdb.spec?.selector, podLabels(deployment(name)))).toBe(true);
    });
  });

  it('exposes the SMTP listeners of inbound-smtp on the container ports and on 25/587/465 publicly', () => {
    const container = onlyContainer(deployment('inbound-smtp'));
    const svc = findObject<IService>(objects, 'Service', 'inbound-smtp');
    const pub = findObject<IService>(objects, 'Service', 'inbound-smtp-public');
    for (const port of Object.values(SMTP_PORTS)) {
      expect(container.ports?.map((p) => p.containerPort)).toContain(port);
      const internal = svc.spec?.ports?.find((p) => p.port === port);
      expect(resolveContainerPort(container, internal?.targetPort)).toBe(port);
    }
    expect(pub.spec?.type).toBe('LoadBalancer');
    expect(pub.spec?.externalTrafficPolicy).toBe('Local');
    const published = new Map(pub.spec?.ports?.map((p) => [p.port, resolveContainerPort(container, p.targetPort)]));
    expect(published).toEqual(
      new Map([
        [25, SMTP_PORTS.SMTP_MX_PORT],
        [587, SMTP_PORTS.SMTP_RELAY_PORT],
        [465, SMTP_PORTS.SMTP_RELAY_TLS_PORT],
      ]),
    );
    expect([...published.values()]).not.toContain(HTTP_PORTS['inbound-smtp']);
  });

  it('mounts the optional SMTP certificate Secret read-only where the README points SMTP_TLS_CERT/SMTP_TLS_KEY', () => {
    const d = deployment('inbound-smtp');
    const container = onlyContainer(d);
    const volume = d.spec?.template.spec?.volumes?.find((v) => v.secret?.secretName === 'postline-smtp-tls');
    // Optional: without the Secret the pod starts, with a self-signed certificate.
    expect(volume?.secret?.optional).toBe(true);
    const mount = container.volumeMounts?.find((m) => m.name === volume?.name);
    expect(mount?.readOnly).toBe(true);
    const readme = readRepoFile('k8s/README.md');
    expect(readme).toContain(`SMTP_TLS_CERT=${mount?.mountPath}/tls.crt`);
    expect(readme).toContain(`SMTP_TLS_KEY=${mount?.mountPath}/tls.key`);
    // The base leaves them unset: pointing at files of a Secret that may not exist would stop the pod.
    const env = containerEnv(container, objects, [secret]);
    expect(env.has('SMTP_TLS_CERT') || env.has('SMTP_TLS_KEY')).toBe(false);
  });

  it('has a migration Job running SERVICE=migrate with the same image, config and Secret', () => {
    const job = findObject<IJob>(objects, 'Job', 'postline-migrate');
    const containers = job.spec?.template.spec?.containers ?? [];
    expect(containers).toHaveLength(1);
    const [container] = containers;
    const service = onlyContainer(deployment('sender'));
    expect(container?.image).toBe(service.image);
    expect(container?.env).toContainEqual({ name: 'SERVICE', value: 'migrate' });
    expect(container?.envFrom).toEqual(service.envFrom);
    expect(job.spec?.template.spec?.restartPolicy).toBe('Never');
    expect(job.spec?.template.spec?.securityContext?.runAsNonRoot).toBe(true);
  });

  describe('caddy, the HTTPS front of the gateway', () => {
    const caddy = () => deployment('caddy');

    it('runs deploy/Caddyfile from its ConfigMap, pointed at the gateway Service', () => {
      const d = caddy();
      const container = onlyContainer(d);
      expect(container.image).toMatch(/^caddy:2(\.|$)/);
      const mount = container.volumeMounts?.find((m) => m.mountPath === '/etc/caddy');
      expect(mount?.readOnly).toBe(true);
      const volume = d.spec?.template.spec?.volumes?.find((v) => v.name === mount?.name);
      const config = findObject<{ data?: Record<string, string> }>(objects, 'ConfigMap', volume?.configMap?.name ?? '');
      expect(config.data?.Caddyfile).toBe(readRepoFile('deploy/Caddyfile'));
      const gateway = findObject<IService>(objects, 'Service', 'api-gateway');
      expect(gateway.spec?.ports?.map((p) => p.port)).toContain(HTTP_PORTS['api-gateway']);
      expect(container.env).toEqual([
        { name: 'POSTLINE_GATEWAY', value: `api-gateway:${HTTP_PORTS['api-gateway']}` },
        { name: 'CADDY_CERT_ISSUER', value: 'acme' },
      ]);
    });

    it('keeps its certificates on a PersistentVolumeClaim: one replica, replaced rather than rolled', () => {
      const d = caddy();
      const mount = onlyContainer(d).volumeMounts?.find((m) => m.mountPath === '/data');
      const volume = d.spec?.template.spec?.volumes?.find((v) => v.name === mount?.name);
      const claim = findObject<IPersistentVolumeClaim>(objects, 'PersistentVolumeClaim', 'caddy-data');
      expect(volume?.persistentVolumeClaim?.claimName).toBe(claim.metadata?.name);
      expect(claim.spec?.accessModes).toEqual(['ReadWriteOnce']);
      expect(d.spec?.replicas).toBe(1);
      expect(d.spec?.strategy?.type).toBe('Recreate');
      expect(objects.some((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === 'caddy')).toBe(false);
    });

    it('runs non-root on a read-only root filesystem, on 80 and 443 by the unprivileged-port sysctl', () => {
      const d = caddy();
      const pod = d.spec?.template.spec;
      const container = onlyContainer(d);
      expect(pod?.securityContext?.runAsNonRoot).toBe(true);
      expect(pod?.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(pod?.securityContext?.sysctls).toEqual([{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }]);
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
      });
      expect(container.ports?.map((p) => [p.name, p.containerPort])).toEqual([
        ['http', 80],
        ['https', 443],
      ]);
      expect(resolveContainerPort(container, container.readinessProbe?.tcpSocket?.port)).toBe(443);
      for (const kind of ['requests', 'limits'] as const) {
        expect(container.resources?.[kind]).toMatchObject({ cpu: expect.anything(), memory: expect.anything() });
      }
    });

    it('is published by a LoadBalancer on 80 and 443 that keeps the client’s address, the one proxy the gateway trusts', () => {
      const container = onlyContainer(caddy());
      const svc = findObject<IService>(objects, 'Service', 'caddy');
      expect(svc.spec?.type).toBe('LoadBalancer');
      expect(svc.spec?.externalTrafficPolicy).toBe('Local');
      expect(selectorMatches({ matchLabels: svc.spec?.selector }, podLabels(caddy()))).toBe(true);
      const published = new Map(svc.spec?.ports?.map((p) => [p.port, resolveContainerPort(container, p.targetPort)]));
      expect(published).toEqual(
        new Map([
          [80, 80],
          [443, 443],
        ]),
      );
      const env = containerEnv(onlyContainer(deployment('api-gateway')), objects, [secret]);
      expect(env.get('TRUSTED_PROXY_HOPS')).toBe('1');
    });
  });

  describe('network policies', () => {
    let policies: INetworkPolicy[];
    const pod = (name: (typeof SERVICES)[number] | 'caddy'): TargetPod => {
      const d = deployment(name);
      return { labels: podLabels(d), container: onlyContainer(d) };
    };
    const caddyPod = () => pod('caddy');
    const gateway: Peer = {
      kind: 'pod',
      labels: { 'app.kubernetes.io/name': 'api-gateway', 'app.kubernetes.io/part-of': 'postline' },
    };
    const external: Peer = { kind: 'external' };
    const scraper: Peer = { kind: 'pod', labels: { 'postline.dev/metrics-scraper': 'true' }, otherNamespace: true };
    const neighbour: Peer = { kind: 'pod', labels: { 'app.kubernetes.io/name': 'something-else' } };
    beforeAll(() => {
      policies = objects.filter((o) => o.kind === 'NetworkPolicy') as INetworkPolicy[];
    });

    it('isolates every Postline pod, with a default deny for all of them', () => {
      const denyAll = policies.filter((p) => !p.spec?.ingress || p.spec.ingress.length === 0);
      expect(denyAll).toHaveLength(1);
      for (const name of SERVICES) {
        expect(policiesSelecting(denyAll, pod(name))).toHaveLength(1);
      }
      const job = findObject<IJob>(objects, 'Job', 'postline-migrate');
      const jobPod = {
        labels: job.spec?.template.metadata?.labels ?? {},
        container: onlyContainer(deployment('sender')),
      };
      expect(policiesSelecting(denyAll, jobPod)).toHaveLength(1);
      expect(policiesSelecting(denyAll, caddyPod())).toHaveLength(1);
    });

    it('lets anyone reach Caddy on 80 and 443, and Caddy the gateway’s API port, even past a narrowed public rule', () => {
      for (const port of [80, 443]) expect(ingressAllowed(policies, external, caddyPod(), port)).toBe(true);
      const caddy: Peer = { kind: 'pod', labels: caddyPod().labels };
      const port = HTTP_PORTS['api-gateway'];
      const narrowed = policies.filter((p) => p.metadata?.name !== 'api-gateway-public');
      expect(ingressAllowed(narrowed, caddy, pod('api-gateway'), port)).toBe(true);
      expect(ingressAllowed(narrowed, external, pod('api-gateway'), port)).toBe(false);
      // Caddy reaches no owner's internal API.
      for (const name of SERVICES.filter((s) => s !== 'api-gateway')) {
        expect([name, ingressAllowed(policies, caddy, pod(name), HTTP_PORTS[name])]).toEqual([name, false]);
      }
    });

    it('lets anyone reach the public API and the SMTP listeners', () => {
      expect(ingressAllowed(policies, external, pod('api-gateway'), HTTP_PORTS['api-gateway'])).toBe(true);
      for (const port of Object.values(SMTP_PORTS)) {
        expect(ingressAllowed(policies, external, pod('inbound-smtp'), port)).toBe(true);
      }
    });

    it.each(SERVICES.filter((s) => s !== 'api-gateway'))('keeps the HTTP port of %s internal', (name) => {
      const port = HTTP_PORTS[name];
      expect(ingressAllowed(policies, external, pod(name), port)).toBe(false);
      expect(ingressAllowed(policies, neighbour, pod(name), port)).toBe(false);
      expect(ingressAllowed(policies, { kind: 'pod', labels: pod('sender').labels }, pod(name), port)).toBe(false);
      // Prometheus may scrape /metrics from any namespace when labelled for it.
      expect(ingressAllowed(policies, scraper, pod(name), port)).toBe(true);
    });

    it.each(['sender', 'inbound-smtp', 'webhook-dispatcher', 'domain-verifier'] as const)(
      'lets the gateway reach the internal API of %s',
      (name) => {
        expect(ingressAllowed(policies, gateway, pod(name), HTTP_PORTS[name])).toBe(true);
      },
    );

    it('lets inbound-smtp reach the API port of the gateway (the SMTP relay submits through it), even past a narrowed public rule', () => {
      const inbound: Peer = { kind: 'pod', labels: pod('inbound-smtp').labels };
      const port = HTTP_PORTS['api-gateway'];
      expect(ingressAllowed(policies, inbound, pod('api-gateway'), port)).toBe(true);
      const narrowed = policies.filter((p) => p.metadata?.name !== 'api-gateway-public');
      expect(ingressAllowed(narrowed, inbound, pod('api-gateway'), port)).toBe(true);
      expect(ingressAllowed(narrowed, neighbour, pod('api-gateway'), port)).toBe(false);
    });

    it('opens nothing else: no other port of any Postline pod is reachable from outside', () => {
      for (const name of SERVICES) {
        const target = pod(name);
        for (const p of target.container.ports ?? []) {
          const publicPort =
            (name === 'api-gateway' && p.containerPort === HTTP_PORTS['api-gateway']) ||
            (name === 'inbound-smtp' && (Object.values(SMTP_PORTS) as number[]).includes(p.containerPort));
          expect([name, p.containerPort, ingressAllowed(policies, external, target, p.containerPort)]).toEqual([
            name,
            p.containerPort,
            publicPort,
          ]);
        }
      }
    });
  });
});
