// A plaintext or TLS connection to a listener that hands out whole replies and notices the close.
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { createReplyReader } from './replies.ts';
import { preview, type SmtpReply } from './session.ts';

/** How long a connection (and a TLS handshake) may take, in milliseconds. */
const CONNECT_TIMEOUT_MS = 10_000;

type Connection = {
  write: (bytes: Buffer) => void;
  /** The next reply, or why there is none. */
  reply: (timeoutMs: number) => Promise<SmtpReply | 'closed' | 'timeout'>;
  upgrade: () => Promise<string | undefined>;
  isClosed: () => boolean;
  waitClosed: (timeoutMs: number) => Promise<boolean>;
  reader: ReturnType<typeof createReplyReader>;
  destroy: () => void;
};

export async function openConnection(
  host: string,
  port: number,
  localAddress: string,
  tls: boolean,
): Promise<Connection> {
  const reader = createReplyReader();
  let closed = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const onData = (chunk: Buffer) => {
    reader.push(chunk);
    notify();
  };
  const onClose = () => {
    closed = true;
    notify();
  };
  const options = { host, port, localAddress };
  let socket: Socket | TLSSocket = tls ? tlsConnect({ ...options, rejectUnauthorized: false }) : netConnect(options);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no connection to port ${port} in ${CONNECT_TIMEOUT_MS} ms`)),
      CONNECT_TIMEOUT_MS,
    );
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  socket.on('error', () => undefined);
  socket.on('data', onData);
  socket.on('close', onClose);

  const wait = (timeoutMs: number, done: () => boolean) =>
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (done()) {
          clearTimeout(timer);
          return resolve(true);
        }
        wake = check;
      };
      const timer = setTimeout(() => {
        wake = undefined;
        resolve(false);
      }, timeoutMs);
      check();
    });

  return {
    write: (bytes) => {
      if (!closed && !socket.destroyed) socket.write(bytes);
    },
    async reply(timeoutMs) {
      const arrived = await wait(timeoutMs, () => reader.pending() > 0 || closed);
      const reply = reader.take();
      if (reply) return reply;
      return arrived ? 'closed' : 'timeout';
    },
    async upgrade() {
      if (reader.rest().length > 0) return `bytes after the 220 to STARTTLS: ${preview(reader.rest().toString())}`;
      const raw = socket;
      raw.off('data', onData);
      raw.off('close', onClose);
      const secure = tlsConnect({ socket: raw, rejectUnauthorized: false });
      socket = secure;
      secure.on('error', () => undefined);
      const outcome = await new Promise<string | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(`no TLS handshake in ${CONNECT_TIMEOUT_MS} ms`), CONNECT_TIMEOUT_MS);
        secure.once('secureConnect', () => {
          clearTimeout(timer);
          resolve(undefined);
        });
        secure.once('error', (err: Error) => {
          clearTimeout(timer);
          resolve(`TLS handshake after 220 failed: ${err.message}`);
        });
      });
      secure.on('data', onData);
      secure.on('close', onClose);
      if (secure.destroyed) onClose();
      return outcome;
    },
    isClosed: () => closed,
    waitClosed: (timeoutMs) => wait(timeoutMs, () => closed),
    reader,
    destroy: () => socket.destroy(),
  };
}
