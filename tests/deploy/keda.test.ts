// The optional KEDA component (k8s/keda) in an overlay of the base: ScaledObjects and their
// TriggerAuthentication valid against KEDA's CRD schemas (@kubernetes-models/keda), scaling the sender and the
// webhook-dispatcher on the RabbitMQ queues their consumers really declare and on CPU, in place of the base's
// CPU HorizontalPodAutoscalers for those two; the gateway and the others keep theirs. The base alone renders
// no KEDA object, so a cluster without KEDA applies it as it is.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ScaledObject, type IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import {
  TriggerAuthentication,
  type ITriggerAuthentication,
} from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import { CONSUMER_QUEUES } from '../../services/api-gateway/src/admin/consumer-queues.ts';
import {
  SERVICES,
  containerEnv,
  findObject,
  loadYamlFile,
  onlyContainer,
  readRepoFile,
  renderKustomize,
  renderWithComponents,
  type K8sObject,
} from './manifests.ts';

/** What KEDA scales on the work waiting, and on which of its consumers' queues. */
const SCALED: Record<string, string[]> = {
  sender: ['deliver', 'import-contacts'],
  'webhook-dispatcher': ['deliver', 'public-events'],
};

let base: K8sObject[];
let objects: K8sObject[];
let secret: ISecret;
beforeAll(() => {
  base = renderKustomize();
  objects = renderWithComponents(['k8s/keda']);
  secret = loadYamlFile<ISecret>('k8s/secret.example.yaml');
});

const scaledObject = (name: string) => findObject<IScaledObject>(objects, 'ScaledObject', name);
const baseHpa = (name: string) => findObject<IHorizontalPodAutoscaler>(base, 'HorizontalPodAutoscaler', name);

describe('k8s/keda', () => {
  it('renders ScaledObjects and a TriggerAuthentication valid against KEDA’s schemas', () => {
    const keda = objects.filter((o) => o.apiVersion === 'keda.sh/v1alpha1');
    expect(keda.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ScaledObject/sender',
      'ScaledObject/webhook-dispatcher',
      'TriggerAuthentication/postline-rabbitmq',
    ]);
    for (const obj of keda) {
      const model =
        obj.kind === 'ScaledObject'
          ? new ScaledObject(obj as IScaledObject)
          : new TriggerAuthentication(obj as ITriggerAuthentication);
      expect(() => model.validate()).not.toThrow();
    }
    // The schema bites: a trigger without its type, a count as a string, a number as a trigger value.
    const sender = scaledObject('sender');
    const broken = [
      { ...sender, spec: { ...sender.spec, triggers: [{ metadata: {} }] } },
      { ...sender, spec: { ...sender.spec, minReplicaCount: '2' } },
      { ...sender, spec: { ...sender.spec, triggers: [{ type: 'rabbitmq', metadata: { value: 500 } }] } },
    ];
    for (const obj of broken) expect(() => new ScaledObject(obj as never).validate()).toThrow();
  });

  it('keeps KEDA out of the base: without the component every service has its CPU HorizontalPodAutoscaler', () => {
    expect(base.filter((o) => o.apiVersion.startsWith('keda.sh/'))).toEqual([]);
    for (const name of SERVICES) expect(baseHpa(name).spec?.metrics?.[0]?.resource?.name).toBe('cpu');
  });

  it('leaves the gateway and the services it does not scale on their CPU HorizontalPodAutoscalers', () => {
    for (const name of SERVICES.filter((s) => !(s in SCALED))) {
      expect(findObject<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler', name)).toEqual(baseHpa(name));
    }
    expect(objects.some((o) => o.kind === 'ScaledObject' && o.metadata.name === 'api-gateway')).toBe(false);
  });

  describe.each(Object.entries(SCALED))('%s', (name, consumers) => {
    it('replaces the base’s HorizontalPodAutoscaler by a ScaledObject with the same bounds and CPU target', () => {
      expect(objects.filter((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === name)).toEqual([]);
      const so = scaledObject(name);
      const hpa = baseHpa(name);
      expect(so.spec.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      findObject<IDeployment>(objects, 'Deployment', name);
      expect(so.spec.minReplicaCount).toBe(hpa.spec?.minReplicas);
      expect(so.spec.maxReplicaCount).toBe(hpa.spec?.maxReplicas);
      const cpu = so.spec.triggers.filter((t) => t.type === 'cpu');
      expect(cpu).toEqual([
        {
          type: 'cpu',
          metricType: 'Utilization',
          metadata: { value: String(hpa.spec?.metrics?.[0]?.resource?.target.averageUtilization) },
        },
      ]);
      // On a cluster that ran the base, KEDA takes over the HorizontalPodAutoscaler of that name.
      expect(so.metadata?.annotations?.['scaledobject.keda.sh/transfer-hpa-ownership']).toBe('true');
      expect(so.spec.advanced?.horizontalPodAutoscalerConfig?.name).toBe(name);
    });

    it('scales on the length of the queues its consumers declare, authenticated with AMQP_URL', () => {
      const env = containerEnv(onlyContainer(findObject<IDeployment>(objects, 'Deployment', name)), objects, [secret]);
      const prefix = env.get('BROKER_PREFIX');
      const queues = consumers.map((consumer) => `${prefix}.${name}.${consumer}`);
      // Each is a consumer the service has (the admin CLI's list, checked against the running services).
      for (const consumer of consumers) expect(CONSUMER_QUEUES).toContainEqual({ service: name, consumer });
      const rabbit = scaledObject(name).spec.triggers.filter((t) => t.type === 'rabbitmq');
      expect(rabbit.map((t) => t.metadata.queueName)).toEqual(queues);
      for (const t of rabbit) {
        expect(t.metadata).toMatchObject({
          protocol: 'amqp',
          mode: 'QueueLength',
          value: expect.stringMatching(/^\d+$/),
        });
        expect(Number(t.metadata.value)).toBeGreaterThan(0);
        expect(t.authenticationRef?.name).toBe('postline-rabbitmq');
      }
      const auth = findObject<ITriggerAuthentication>(objects, 'TriggerAuthentication', 'postline-rabbitmq');
      expect(auth.spec.secretTargetRef).toEqual([{ parameter: 'host', name: 'postline-secrets', key: 'AMQP_URL' }]);
      expect(Object.keys(secret.stringData ?? {})).toContain('AMQP_URL');
    });
  });

  it('is documented with the fallback for clusters without KEDA', () => {
    const readme = readRepoFile('k8s/README.md');
    expect(readme).toContain('k8s/keda');
    expect(readme).toMatch(/without KEDA/i);
  });
});
