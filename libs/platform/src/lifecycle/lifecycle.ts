import type { Logger } from '../logger/logger.ts';

export type Stoppable = { name: string; stop: () => Promise<void> | void };

export type Lifecycle = {
  /** Register a part to stop; parts stop in reverse order of registration. */
  add(part: Stoppable): void;
  /** Stops everything once; later calls return the same promise. */
  shutdown(reason: string): Promise<void>;
  readonly stopping: boolean;
};

/**
 * One SIGTERM/SIGINT handler per process: readiness goes false first (`onStopping`), then every part
 * stops in reverse order within `timeoutMs`; past the deadline the process exits non-zero.
 */
export function createLifecycle(opts: {
  logger: Logger;
  timeoutMs: number;
  onStopping?: () => void;
  exit?: (code: number) => void;
  handleSignals?: boolean;
}): Lifecycle {
  const parts: Stoppable[] = [];
  let stopping: Promise<void> | undefined;
  const exit = opts.exit ?? ((code: number) => process.exit(code));

  const lifecycle: Lifecycle = {
    add(part) {
      parts.push(part);
    },
    get stopping() {
      return stopping !== undefined;
    },
    shutdown(reason) {
      stopping ??= (async () => {
        opts.logger.info({ reason }, 'shutting down');
        opts.onStopping?.();
        const deadline = setTimeout(() => {
          opts.logger.error({ timeout_ms: opts.timeoutMs }, 'shutdown deadline passed; exiting');
          exit(1);
        }, opts.timeoutMs);
        deadline.unref();
        for (const part of [...parts].reverse()) {
          try {
            await part.stop();
          } catch (err) {
            opts.logger.error({ err, part: part.name }, 'failed to stop part');
          }
        }
        clearTimeout(deadline);
        opts.logger.info('stopped');
      })();
      return stopping;
    },
  };

  if (opts.handleSignals !== false) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, () => {
        void lifecycle.shutdown(signal).then(() => exit(0));
      });
    }
  }
  return lifecycle;
}
