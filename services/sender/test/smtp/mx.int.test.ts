import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDnsServer, uniqueName, type DnsServer } from '@postline/testing';
import { createMxResolver, type MxResolver } from '../../src/delivery/smtp/mx.ts';

let dns: DnsServer;
let resolver: MxResolver;
let publicOnly: MxResolver;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = createMxResolver({ servers: [dns.address], timeoutMs: 300, tries: 1, allowPrivate: true, cacheMs: 0 });
  publicOnly = createMxResolver({ servers: [dns.address], timeoutMs: 300, tries: 1, allowPrivate: false, cacheMs: 0 });
});

afterAll(async () => {
  await dns.close();
});

const domain = () =>
  `${uniqueName('mx')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')}.test`;

describe('createMxResolver', () => {
  it('sorts MX hosts by preference and resolves A and AAAA of each', async () => {
    const d = domain();
    dns.set(d, [
      { type: 'MX', exchange: `b.${d}`, priority: 20 },
      { type: 'MX', exchange: `a.${d}`, priority: 10 },
    ]);
    dns.set(`a.${d}`, [
      { type: 'A', address: '192.0.2.10' },
      { type: 'AAAA', address: '2001:db8::10' },
    ]);
    dns.set(`b.${d}`, [{ type: 'A', address: '192.0.2.20' }]);
    expect(await resolver.resolve(d)).toEqual({
      kind: 'hosts',
      hosts: [
        { exchange: `a.${d}`, priority: 10, addresses: ['192.0.2.10', '2001:db8::10'] },
        { exchange: `b.${d}`, priority: 20, addresses: ['192.0.2.20'] },
      ],
    });
  });

  it('reuses an answer for a while but never a temporary failure', async () => {
    const cached = createMxResolver({
      servers: [dns.address],
      timeoutMs: 300,
      tries: 1,
      allowPrivate: true,
      cacheMs: 60_000,
    });
    const d = domain();
    dns.set(d, [{ type: 'MX', exchange: `mx.${d}`, priority: 10 }]);
    dns.set(`mx.${d}`, [{ type: 'A', address: '192.0.2.30' }]);
    const mxQueries = () => dns.queries.filter((q) => q.name === d && q.type === 'MX').length;
    expect(cached.cached(d)).toBeUndefined();
    expect((await cached.resolve(d)).kind).toBe('hosts');
    expect((await cached.resolve(d)).kind).toBe('hosts');
    // The kept answer is also there to read without a lookup.
    expect(cached.cached(d.toUpperCase())).toMatchObject({ kind: 'hosts', hosts: [{ exchange: `mx.${d}` }] });
    expect(mxQueries()).toBe(1);

    const broken = domain();
    dns.fail(broken, 'servfail');
    expect((await cached.resolve(broken)).kind).toBe('temporary');
    expect(cached.cached(broken)).toBeUndefined();
    dns.fail(broken, undefined);
    dns.set(broken, [{ type: 'MX', exchange: `mx.${d}`, priority: 10 }]);
    expect((await cached.resolve(broken)).kind).toBe('hosts');
  });

  it('asks once for a domain that many deliveries look up at the same time', async () => {
    const d = domain();
    dns.set(d, [{ type: 'MX', exchange: `mx.${d}`, priority: 10 }]);
    dns.set(`mx.${d}`, [{ type: 'A', address: '192.0.2.40' }]);
    const results = await Promise.all(Array.from({ length: 50 }, () => resolver.resolve(d)));
    expect(results.every((r) => r.kind === 'hosts' && r.hosts[0]?.addresses[0] === '192.0.2.40')).toBe(true);
    expect(dns.queries.filter((q) => q.name === d && q.type === 'MX')).toHaveLength(1);
    expect(dns.queries.filter((q) => q.name === `mx.${d}` && q.type === 'A')).toHaveLength(1);
    // Once answered (this resolver caches nothing), the next lookup asks again.
    await resolver.resolve(d);
    expect(dns.queries.filter((q) => q.name === d && q.type === 'MX')).toHaveLength(2);
  });

  it('shuffles hosts of equal preference', async () => {
    const d = domain();
    const names = ['a', 'b', 'c', 'd'].map((n) => `${n}.${d}`);
    dns.set(
      d,
      names.map((exchange) => ({ type: 'MX' as const, exchange, priority: 10 })),
    );
    for (const [i, name] of names.entries()) dns.set(name, [{ type: 'A', address: `192.0.2.${i + 1}` }]);
    const orders = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const result = await resolver.resolve(d);
      if (result.kind === 'hosts') orders.add(result.hosts.map((h) => h.exchange).join(','));
    }
    expect(orders.size).toBeGreaterThan(1);
  });

  it('fails a null MX at once with 556 5.1.10 and never looks up an address', async () => {
    const d = domain();
    dns.set(d, [{ type: 'MX', exchange: '.', priority: 0 }]);
    const before = dns.queries.length;
    expect(await resolver.resolve(d)).toMatchObject({
      kind: 'permanent',
      code: 556,
      enhanced: '5.1.10',
      subType: 'NoEmail',
    });
    expect(dns.queries.slice(before)).toEqual([{ name: d, type: 'MX' }]);
  });

  it('fails NXDOMAIN permanently with 5.1.2', async () => {
    expect(await resolver.resolve(domain())).toMatchObject({
      kind: 'permanent',
      code: 550,
      enhanced: '5.1.2',
      subType: 'NoEmail',
    });
  });

  it.each(['servfail', 'timeout', 'refused'] as const)('reports a DNS %s as temporary 451 4.4.3', async (how) => {
    const d = domain();
    dns.set(d, [{ type: 'MX', exchange: `mx.${d}`, priority: 10 }]);
    dns.fail(d, how);
    expect(await resolver.resolve(d)).toMatchObject({ kind: 'temporary', code: 451, enhanced: '4.4.3' });
  });

  it("uses the domain's own addresses when it has no MX (implicit MX)", async () => {
    const d = domain();
    dns.set(d, [{ type: 'A', address: '192.0.2.30' }]);
    expect(await resolver.resolve(d)).toEqual({
      kind: 'hosts',
      hosts: [{ exchange: d, priority: 0, addresses: ['192.0.2.30'] }],
    });
  });

  it('does not use the domain addresses when MX records exist but none is usable', async () => {
    const d = domain();
    dns.set(d, [
      { type: 'MX', exchange: '192.0.2.40', priority: 10 }, // an IP literal is not a host name
      { type: 'MX', exchange: `missing.${d}`, priority: 20 },
      { type: 'A', address: '192.0.2.41' },
    ]);
    expect(await resolver.resolve(d)).toMatchObject({
      kind: 'permanent',
      code: 550,
      enhanced: '5.4.4',
      subType: 'General',
    });
  });

  it('skips a host whose address lookup fails temporarily while another works, and is temporary when none works', async () => {
    const d = domain();
    dns.set(d, [
      { type: 'MX', exchange: `broken.${d}`, priority: 10 },
      { type: 'MX', exchange: `ok.${d}`, priority: 20 },
    ]);
    dns.set(`broken.${d}`, [{ type: 'A', address: '192.0.2.50' }]);
    dns.fail(`broken.${d}`, 'servfail');
    dns.set(`ok.${d}`, [{ type: 'A', address: '192.0.2.51' }]);
    expect(await resolver.resolve(d)).toEqual({
      kind: 'hosts',
      hosts: [{ exchange: `ok.${d}`, priority: 20, addresses: ['192.0.2.51'] }],
    });
    dns.fail(`ok.${d}`, 'servfail');
    expect(await resolver.resolve(d)).toMatchObject({ kind: 'temporary', code: 451, enhanced: '4.4.3' });
  });

  it('refuses MX hosts in private, loopback, link-local and shared address space by policy', async () => {
    const d = domain();
    dns.set(d, [
      { type: 'MX', exchange: `loop.${d}`, priority: 10 },
      { type: 'MX', exchange: `private.${d}`, priority: 20 },
      { type: 'MX', exchange: `metadata.${d}`, priority: 30 },
      { type: 'MX', exchange: `cgnat.${d}`, priority: 40 },
    ]);
    dns.set(`loop.${d}`, [{ type: 'A', address: '127.0.0.1' }]);
    dns.set(`private.${d}`, [{ type: 'A', address: '10.0.0.5' }]);
    dns.set(`metadata.${d}`, [{ type: 'AAAA', address: '::ffff:169.254.169.254' }]);
    dns.set(`cgnat.${d}`, [{ type: 'A', address: '100.64.0.1' }]);
    expect(await publicOnly.resolve(d)).toMatchObject({
      kind: 'permanent',
      code: 550,
      enhanced: '5.4.4',
      subType: 'General',
    });
    // the same records pass where private targets are allowed (tests, local development)
    expect(await resolver.resolve(d)).toMatchObject({ kind: 'hosts' });
  });

  it('keeps the public addresses of a host that also has private ones', async () => {
    const d = domain();
    dns.set(d, [{ type: 'MX', exchange: `mx.${d}`, priority: 10 }]);
    dns.set(`mx.${d}`, [
      { type: 'A', address: '10.0.0.5' },
      { type: 'A', address: '93.184.216.34' },
    ]);
    expect(await publicOnly.resolve(d)).toEqual({
      kind: 'hosts',
      hosts: [{ exchange: `mx.${d}`, priority: 10, addresses: ['93.184.216.34'] }],
    });
  });
});
