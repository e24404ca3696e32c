type Started = { stop: () => Promise<unknown> };

export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as { __postlineContainers?: Started[] }).__postlineContainers ?? [];
  // The shared systems (pushed last) stop before the servers they use.
  for (const c of [...started].reverse()) await c.stop();
}
