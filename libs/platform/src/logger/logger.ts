import { destination, pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Paths that never reach a log line. Request/response bodies are logged by the gateway only after its own
 * scrubbing; these catch secrets wherever else they appear.
 */
export const REDACT_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'password',
  '*.password',
  'api_key',
  '*.api_key',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'signing_secret',
  '*.signing_secret',
  'private_key',
  '*.private_key',
  'dkim_private_key_encrypted',
  '*.dkim_private_key_encrypted',
  'config.POSTLINE_SECRET_KEY',
  'POSTLINE_SECRET_KEY',
];

/** pino's types name sonic-boom's stream, which ships no types: it is typed here by what pino needs of it. */
const syncStdout = () =>
  (destination as (opts: { dest: number; sync: boolean }) => DestinationStream)({ dest: 1, sync: true });

/** Structured JSON logs on stdout, one object a line, with the service name on every line. */
export function createLogger(opts: { service: string; level?: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: opts.level ?? 'info',
      base: { service: opts.service },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // Written synchronously: an asynchronous write still in flight at the exit would be printed after the
    // lines queued behind it (the last "shutting down" after "stopped"), and a crash would lose the lines queued.
    opts.destination ?? syncStdout(),
  );
}
