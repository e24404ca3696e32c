// A small evaluator of Kubernetes NetworkPolicy ingress rules, so tests can ask "may this peer reach
// that pod on that port?" instead of restating the YAML. It covers what the base uses: pod and namespace
// selectors (matchLabels, matchExpressions), named and numbered ports, peers without `from` (anyone).
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { resolveContainerPort } from './manifests.ts';

type LabelSelector = NonNullable<INetworkPolicy['spec']>['podSelector'];

/** A pod of the base, in the namespace the base is applied to. */
export type TargetPod = { labels: Record<string, string>; container: IContainer };

/**
 * Who connects. `pod` is a pod (in the base's namespace unless `otherNamespace`);
 * `external` is anything that is not a pod in the cluster (a client on the internet, a load balancer).
 */
export type Peer = { kind: 'external' } | { kind: 'pod'; labels: Record<string, string>; otherNamespace?: boolean };

export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const value = labels[e.key];
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
      default:
        throw new Error(`unknown selector operator ${e.operator}`);
    }
  }
  return true;
}

function isIngressPolicy(p: INetworkPolicy): boolean {
  const types = p.spec?.policyTypes;
  return types ? types.includes('Ingress') : true;
}

/** Policies that isolate `pod` for ingress. With none, the pod accepts everything. */
export function policiesSelecting(policies: INetworkPolicy[], pod: TargetPod): INetworkPolicy[] {
  return policies.filter((p) => isIngressPolicy(p) && selectorMatches(p.spec?.podSelector, pod.labels));
}

export function ingressAllowed(policies: INetworkPolicy[], peer: Peer, pod: TargetPod, port: number): boolean {
  const selecting = policiesSelecting(policies, pod);
  if (selecting.length === 0) return true;
  return selecting.some((policy) =>
    (policy.spec?.ingress ?? []).some((rule) => {
      const portOk =
        !rule.ports ||
        rule.ports.length === 0 ||
        rule.ports.some((p) => (p.protocol ?? 'TCP') === 'TCP' && resolveContainerPort(pod.container, p.port) === port);
      if (!portOk) return false;
      if (!rule.from || rule.from.length === 0) return true;
      return rule.from.some((from) => {
        if (from.ipBlock) throw new Error('ipBlock peers are not evaluated by this helper');
        if (peer.kind === 'external') return false;
        if (from.namespaceSelector) {
          // {} selects every namespace; the base uses no narrower namespace selector.
          if (Object.keys(from.namespaceSelector).length > 0) throw new Error('only namespaceSelector {} is evaluated');
          return selectorMatches(from.podSelector, peer.labels);
        }
        return !peer.otherNamespace && selectorMatches(from.podSelector, peer.labels);
      });
    }),
  );
}
