import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { freePort } from './system.ts';

/**
 * The DNS server a shared system resolves through. It holds no records: each test file runs its own
 * `startDnsServer()` and registers its address here; every question is asked of every registered server,
 * and the most specific answer wins (records, then a failure the file asked for, then "no records of this
 * type", then NXDOMAIN). If a registered server does not answer (a file's `fail(name, 'timeout')`) and no
 * other has records, nothing is answered, so the resolver times out as it would on the file's own server.
 * Files use names of their own, so two files never both hold records for one name.
 */
export type ForwardingDns = {
  address: string;
  register: (address: string) => void;
  unregister: (address: string) => void;
  close: () => Promise<void>;
};

/**
 * How long a registered server may take to answer before it counts as not answering: each runs in a jest
 * worker whose event loop a test may hold for a moment, and two workers run at once.
 */
const BACKEND_TIMEOUT_MS = 1500;

const RCODE_NOERROR = 0;
const RCODE_NXDOMAIN = 3;

type Answer = { packet: Buffer; rcode: number; answers: number };

export async function startForwardingDns(): Promise<ForwardingDns> {
  const backends = new Set<string>();
  const client = createSocket('udp4');
  await new Promise<void>((resolve) => client.bind(0, '127.0.0.1', resolve));
  // Answers from the file servers by "host:port/id", for the question asked with that id.
  const pending = new Map<string, (packet: Buffer) => void>();
  client.on('message', (packet, from) => {
    const key = `${from.address}:${from.port}/${packet.readUInt16BE(0)}`;
    pending.get(key)?.(packet);
  });

  const ask = (backend: string, query: Buffer): Promise<Answer | undefined> =>
    new Promise((resolve) => {
      const [host = '127.0.0.1', port = '53'] = backend.split(':');
      const key = `${host}:${port}/${query.readUInt16BE(0)}`;
      const timer = setTimeout(() => {
        pending.delete(key);
        resolve(undefined);
      }, BACKEND_TIMEOUT_MS);
      pending.set(key, (packet) => {
        clearTimeout(timer);
        pending.delete(key);
        resolve({ packet, rcode: packet.readUInt8(3) & 0x0f, answers: packet.readUInt16BE(6) });
      });
      client.send(query, Number(port), host);
    });

  /** The answer to send, or undefined to send none. */
  const resolve = async (query: Buffer): Promise<Buffer | undefined> => {
    if (query.length < 12) return undefined;
    const answers = await Promise.all([...backends].map((b) => ask(b, query)));
    const got = answers.filter((a): a is Answer => a !== undefined);
    const records = got.find((a) => a.answers > 0);
    if (records) return records.packet;
    if (got.length < answers.length) return undefined;
    const failure = got.find((a) => a.rcode !== RCODE_NOERROR && a.rcode !== RCODE_NXDOMAIN);
    return (failure ?? got.find((a) => a.rcode === RCODE_NOERROR))?.packet ?? nxdomain(query);
  };

  const port = await bindBoth(
    (udp) =>
      udp.on('message', (query, from) => {
        void resolve(query).then((answer) => answer && udp.send(answer, from.port, from.address));
      }),
    (tcp) =>
      tcp.on('connection', (socket) => {
        let buffered = Buffer.alloc(0);
        socket.on('error', () => undefined);
        socket.on('data', (chunk: Buffer) => {
          buffered = Buffer.concat([buffered, chunk]);
          while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
            const query = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
            buffered = buffered.subarray(2 + query.length);
            void resolve(Buffer.from(query)).then((answer) => {
              if (!answer || socket.destroyed) return;
              const length = Buffer.alloc(2);
              length.writeUInt16BE(answer.length);
              socket.write(Buffer.concat([length, answer]));
            });
          }
        });
      }),
  );

  return {
    address: `127.0.0.1:${port.port}`,
    register: (address) => void backends.add(address),
    unregister: (address) => void backends.delete(address),
    close: async () => {
      client.close();
      await port.close();
    },
  };
}

/** The query turned into an NXDOMAIN answer: QR set, RD kept, RA set, rcode 3, no records. */
function nxdomain(query: Buffer): Buffer {
  const answer = Buffer.from(query);
  answer.writeUInt8(0x80 | (query.readUInt8(2) & 0x01), 2);
  answer.writeUInt8(0x80 | RCODE_NXDOMAIN, 3);
  answer.writeUInt16BE(0, 6);
  answer.writeUInt16BE(0, 8);
  answer.writeUInt16BE(0, 10);
  // Keep only the question (ARCOUNT 0 drops an EDNS record after it).
  return answer.subarray(0, 12 + questionLength(query));
}

function questionLength(query: Buffer): number {
  let offset = 12;
  while (offset < query.length && query.readUInt8(offset) !== 0) offset += 1 + query.readUInt8(offset);
  return offset + 1 + 4 - 12;
}

/** UDP and TCP on one free port of 127.0.0.1 (retried on the rare clash). */
async function bindBoth(
  onUdp: (udp: Socket) => void,
  onTcp: (tcp: Server) => void,
): Promise<{ port: number; close: () => Promise<void> }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await freePort();
    const udp = createSocket('udp4');
    const tcp = createServer();
    const bound = await Promise.all([
      new Promise<boolean>((resolve) => {
        udp.once('error', () => resolve(false));
        udp.bind(port, '127.0.0.1', () => resolve(true));
      }),
      new Promise<boolean>((resolve) => {
        tcp.once('error', () => resolve(false));
        tcp.listen(port, '127.0.0.1', () => resolve(true));
      }),
    ]);
    if (bound.every(Boolean)) {
      onUdp(udp);
      onTcp(tcp);
      return {
        port,
        close: async () => {
          udp.close();
          await new Promise<void>((resolve) => tcp.close(() => resolve()));
        },
      };
    }
    udp.close();
    tcp.close();
  }
  throw new Error('no port free for both UDP and TCP');
}
