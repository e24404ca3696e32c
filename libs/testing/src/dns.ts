import dns2 from 'dns2';
import { freePort } from './system.ts';

const { Packet } = dns2;

export type DnsRecord =
  | { type: 'TXT'; value: string | string[] }
  | { type: 'MX'; exchange: string; priority: number }
  | { type: 'A'; address: string }
  | { type: 'AAAA'; address: string }
  | { type: 'CNAME'; target: string }
  /** `flags` 128 marks the property critical; `tag` is `issue`, `issuewild`, `iodef`, … (RFC 8659). */
  | { type: 'CAA'; flags?: number; tag: string; value: string };

export type DnsFailure = 'servfail' | 'timeout' | 'refused';

export type DnsServer = {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  port: number;
  /** Replaces every record of `name` (any type) with these. */
  set: (name: string, records: DnsRecord[]) => void;
  /** Adds records to `name`, keeping the ones there. */
  add: (name: string, records: DnsRecord[]) => void;
  /** Removes the records of `name` of one type, or all of them (the name becomes NXDOMAIN). */
  remove: (name: string, type?: DnsRecord['type']) => void;
  /** Makes every question for `name` fail this way until cleared with `undefined`. */
  fail: (name: string, how: DnsFailure | undefined) => void;
  /** Questions received, in order (`name` lower-case, `type` as in DnsRecord). */
  queries: { name: string; type: string }[];
  close: () => Promise<void>;
};

const TYPE_NAMES = new Map<number, string>(Object.entries(Packet.TYPE).map(([name, code]) => [code as number, name]));

/**
 * A real authoritative DNS server (UDP and TCP on one port, 127.0.0.1) serving the records a test sets:
 * the recipient's or customer's DNS, faked over real sockets. A name with records of other types answers
 * NODATA, an unknown name NXDOMAIN. TXT strings longer than 255 bytes are split into character-strings as
 * DNS hosts do; give an array to choose the split.
 *
 * @example
 * const dns = await startDnsServer();
 * dns.set('send.example.com', [{ type: 'TXT', value: 'v=spf1 include:_spf.postline.test ~all' }]);
 * // DNS_SERVERS=dns.address
 */
export async function startDnsServer(): Promise<DnsServer> {
  const zone = new Map<string, DnsRecord[]>();
  const failures = new Map<string, DnsFailure>();
  const queries: DnsServer['queries'] = [];
  const key = (name: string) => name.toLowerCase().replace(/\.$/, '');

  const handle: dns2.DnsHandler = (request, send) => {
    const response = Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    if (!question) {
      void send(response);
      return;
    }
    const name = key(question.name);
    const type = TYPE_NAMES.get(question.type) ?? String(question.type);
    queries.push({ name, type });
    const failure = failures.get(name);
    if (failure === 'timeout') return; // never answered: the resolver times out
    const records = zone.get(name);
    if (failure) {
      response.header.rcode = failure === 'servfail' ? Packet.RCODE.SERVFAIL : Packet.RCODE.REFUSED;
    } else if (!records) {
      response.header.rcode = Packet.RCODE.NXDOMAIN;
    } else {
      response.header.aa = 1;
      for (const record of records.filter((r) => r.type === type)) {
        response.answers.push({
          name: question.name,
          class: Packet.CLASS.IN,
          ttl: 60,
          ...rdata(record),
        } as unknown as dns2.Packet.Resource);
      }
    }
    void send(response);
  };

  // UDP and TCP on one port: take a port free for TCP and bind both; retry on the rare clash.
  let server: dns2.DnsServer | undefined;
  let port = 0;
  for (let attempt = 0; !server; attempt++) {
    port = await freePort();
    const candidate = dns2.createServer({ udp: true, tcp: true, handle });
    const bound = await new Promise<boolean>((resolve) => {
      candidate.once('error', () => resolve(false));
      candidate.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } }).then(
        () => resolve(true),
        () => resolve(false),
      );
    });
    if (bound) {
      candidate.on('error', () => undefined);
      candidate.on('requestError', () => undefined);
      server = candidate;
    } else {
      await candidate.close().catch(() => undefined);
      if (attempt > 20) throw new Error('no port free for both UDP and TCP');
    }
  }
  const running = server;

  return {
    address: `127.0.0.1:${port}`,
    port,
    set: (name, records) => void zone.set(key(name), [...records]),
    add: (name, records) => void zone.set(key(name), [...(zone.get(key(name)) ?? []), ...records]),
    remove: (name, type) => {
      if (!type) return void zone.delete(key(name));
      const kept = (zone.get(key(name)) ?? []).filter((r) => r.type !== type);
      if (kept.length > 0) zone.set(key(name), kept);
      else zone.delete(key(name));
    },
    fail: (name, how) => {
      if (how) failures.set(key(name), how);
      else failures.delete(key(name));
    },
    queries,
    close: () => running.close(),
  };
}

function rdata(record: DnsRecord): Record<string, unknown> {
  switch (record.type) {
    case 'TXT':
      return { type: Packet.TYPE.TXT, data: Array.isArray(record.value) ? record.value : chunk(record.value) };
    case 'MX':
      return { type: Packet.TYPE.MX, exchange: record.exchange, priority: record.priority };
    case 'A':
      return { type: Packet.TYPE.A, address: record.address };
    case 'AAAA':
      return { type: Packet.TYPE.AAAA, address: record.address };
    case 'CNAME':
      return { type: Packet.TYPE.CNAME, domain: record.target };
    case 'CAA':
      return { type: Packet.TYPE.CAA, flags: record.flags ?? 0, tag: record.tag, value: record.value };
  }
}

/** A TXT value as DNS carries it: character-strings of at most 255 bytes. */
function chunk(value: string): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < value.length; i += 255) chunks.push(value.slice(i, i + 255));
  return chunks.length > 0 ? chunks : [''];
}
