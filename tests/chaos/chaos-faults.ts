// The faults of a chaos run, struck one at a time under load: SIGKILL or SIGTERM of a service and its restart,
// a cut of a dependency's proxy, a whole-system restart. What it records: each fault's window and how soon
// after its end every service was ready, the exits the run did not cause, and the sender's deliveries in
// flight at its kills and retaken after them.
import { SERVICE_NAMES, type ServiceName } from '@postline/contracts';
import { sleep, waitFor, type System, type TcpProxy } from '@postline/testing';

export type FaultName =
  | `kill ${ServiceName}`
  | `term ${ServiceName}`
  | 'cut rabbitmq'
  | 'cut postgres'
  | 'cut redis'
  | 'restart all';

/** Every fault the run knows, in the order it runs them. */
export const ALL_FAULTS: FaultName[] = [
  ...SERVICE_NAMES.map((name) => `kill ${name}` as const),
  'term sender',
  'term api-gateway',
  'cut rabbitmq',
  'cut postgres',
  'cut redis',
  'restart all',
];

export type FaultRecord = {
  name: FaultName;
  startedAt: number;
  endedAt: number;
  /** From the fault's end until every service answered /readyz 200. */
  readyAfterMs: number;
};

/** What the faults act on: the system's processes and the proxies in front of its dependencies. */
export type FaultTarget = { system: System; proxies: Record<'postgres' | 'rabbitmq' | 'redis', TcpProxy> };

/** A service's /readyz status; 0 when it does not answer. */
async function readiness(system: System, name: ServiceName): Promise<number> {
  try {
    return (await fetch(`${system.services[name].url}/readyz`, { signal: AbortSignal.timeout(2_000) })).status;
  } catch {
    return 0;
  }
}

/** Milliseconds from now until every service answers /readyz 200 (polled). */
async function untilAllReady(system: System, timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  await waitFor(
    'every service ready',
    async () =>
      (await Promise.all(SERVICE_NAMES.map((name) => readiness(system, name)))).every((status) => status === 200),
    timeoutMs,
  );
  return Date.now() - started;
}

/** A numeric sample of a service's /metrics (summed over label sets that match `labels`), 0 when absent. */
async function metricSum(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return sum;
}

type ChildProcessLike = System['services'][ServiceName]['process'];

/**
 * Watches every service for an exit the run did not cause (from now on), and strikes faults in turn with
 * `settleMs` of load after each.
 */
export function createFaultSchedule(
  h: FaultTarget,
  options: { cutMs: number; settleMs: number },
  log: (line: string) => void,
) {
  const unexpectedExits: string[] = [];
  const expected = new Set<ChildProcessLike>();
  const watch = (name: ServiceName) => {
    const service = h.system.services[name];
    const child = service.process;
    child.once('exit', (code, signal) => {
      if (expected.has(child)) return;
      unexpectedExits.push(`${name} exited (${code ?? signal}): ${service.output.slice(-10).join('').slice(-2_000)}`);
    });
  };
  for (const name of SERVICE_NAMES) watch(name);
  const faults: FaultRecord[] = [];
  let inFlightAtSenderKills = 0;
  // The sender's counter of retaken attempts, read before each fault that ends its process and at the end.
  let retakenDeliveries = 0;
  const readRetaken = async () =>
    (retakenDeliveries += await metricSum(h.system.services.sender.url, 'smtp_deliveries_retaken_total').catch(
      () => 0,
    ));

  return {
    faults,
    unexpectedExits,
    inFlightAtSenderKills: () => inFlightAtSenderKills,
    /** Adds the sender's retaken attempts so far: before a fault ends its process, and once the run is over. */
    readRetaken,
    retakenDeliveries: () => retakenDeliveries,
    async run(faultNames: FaultName[]): Promise<void> {
      for (const name of faultNames) {
        const startedAt = Date.now();
        log(`${name}`);
        const [kind, target] = name.split(' ') as [string, string];
        if (kind === 'kill' || kind === 'term') {
          const service = target as ServiceName;
          if (service === 'sender') {
            if (kind === 'kill')
              inFlightAtSenderKills += await metricSum(h.system.services.sender.url, 'smtp_deliveries_in_flight').catch(
                () => 0,
              );
            await readRetaken();
          }
          expected.add(h.system.services[service].process);
          if (kind === 'kill') await h.system.kill(service);
          else await h.system.terminate(service);
          // A moment down, as a crashed pod waits for its restart.
          await sleep(500);
          const endedAt = Date.now();
          await h.system.restart(service);
          watch(service);
          faults.push({
            name,
            startedAt,
            endedAt,
            readyAfterMs: Date.now() - endedAt + (await untilAllReady(h.system)),
          });
        } else if (kind === 'cut') {
          const proxy = h.proxies[target as keyof FaultTarget['proxies']];
          await proxy.cut();
          await sleep(options.cutMs);
          await proxy.restore();
          const endedAt = Date.now();
          faults.push({ name, startedAt, endedAt, readyAfterMs: await untilAllReady(h.system) });
        } else {
          // The whole system: every service stopped gracefully, then started again.
          await readRetaken();
          for (const service of SERVICE_NAMES) expected.add(h.system.services[service].process);
          await Promise.all(SERVICE_NAMES.map((service) => h.system.terminate(service)));
          const endedAt = Date.now();
          await Promise.all(SERVICE_NAMES.map((service) => h.system.restart(service)));
          for (const service of SERVICE_NAMES) watch(service);
          faults.push({
            name,
            startedAt,
            endedAt,
            readyAfterMs: Date.now() - endedAt + (await untilAllReady(h.system)),
          });
        }
        log(`${name}: every service ready ${faults.at(-1)!.readyAfterMs} ms after its end`);
        await sleep(options.settleMs);
      }
    },
  };
}
