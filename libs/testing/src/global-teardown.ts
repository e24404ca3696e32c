type Started = { stop: () => Promise<unknown> };

export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as { __postlineContainers?: Started[] }).__postlineContainers ?? [];
  await Promise.all(started.map((c) => c.stop()));
}
