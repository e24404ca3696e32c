import { describe, expect, it } from '@jest/globals';
import { bearerToken, generateApiKeyToken } from './api-key-token.ts';
import { canonicalJson, requestHash, validIdempotencyKey } from './idempotency.ts';
import { keyProblem } from './key-access.ts';
import { scrubBody } from './scrub.ts';
import { isSendingRoute, ownerOf, publicOwnerOf, publicRouteOf } from './routes.ts';

describe('api key tokens', () => {
  it('are pl_-prefixed, random, and stored as sha256', () => {
    const a = generateApiKeyToken();
    const b = generateApiKeyToken();
    expect(a.token.startsWith('pl_')).toBe(true);
    expect(a.token).not.toBe(b.token);
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.hash).not.toContain(a.token.slice(3));
  });
  it('reads only a Bearer authorization', () => {
    expect(bearerToken('Bearer pl_x')).toBe('pl_x');
    expect(bearerToken('bearer   pl_x ')).toBe('pl_x');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer ')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe('key access', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const usable = { revoked_at: null, expires_at: null, access_enabled: true };
  it('lets a current key of a team with access through and names why any other is refused', () => {
    expect(keyProblem(usable, now)).toBeUndefined();
    expect(keyProblem({ ...usable, expires_at: new Date('2026-01-02T00:00:00Z') }, now)).toBeUndefined();
    expect(keyProblem(undefined, now)).toBe('API key is invalid');
    expect(keyProblem({ ...usable, revoked_at: now }, now)).toBe('API key is invalid');
    expect(keyProblem({ ...usable, expires_at: now }, now)).toBe('API key has expired');
    expect(keyProblem({ ...usable, access_enabled: false }, now)).toBe(
      'API key is not active: access is disabled for this team',
    );
  });
});

describe('idempotency', () => {
  it('hashes the same body with another key order the same, and another body differently', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    expect(requestHash('POST', '/emails', { a: 1, b: 2 })).toBe(requestHash('post', '/emails', { b: 2, a: 1 }));
    expect(requestHash('POST', '/emails', { a: 1 })).not.toBe(requestHash('POST', '/emails', { a: 2 }));
    expect(requestHash('POST', '/emails', { a: 1 })).not.toBe(requestHash('POST', '/emails/batch', { a: 1 }));
    // A batch's validation mode is part of the request; strict is the default.
    expect(requestHash('POST', '/emails/batch', [1], 'permissive')).not.toBe(requestHash('POST', '/emails/batch', [1]));
    expect(requestHash('POST', '/emails/batch', [1], 'Strict')).toBe(requestHash('POST', '/emails/batch', [1]));
  });
  it('accepts keys of 1 to 256 characters', () => {
    expect(validIdempotencyKey('')).toBe(false);
    expect(validIdempotencyKey('k')).toBe(true);
    expect(validIdempotencyKey('k'.repeat(256))).toBe(true);
    expect(validIdempotencyKey('k'.repeat(257))).toBe(false);
  });
});

describe('scrubBody', () => {
  it('removes secrets and attachment contents', () => {
    const out = scrubBody({
      token: 'pl_secret',
      nested: { signing_secret: 'whsec_x' },
      attachments: [{ content: 'AAAA', filename: 'a.pdf' }],
    });
    expect(JSON.stringify(out)).not.toContain('pl_secret');
    expect(JSON.stringify(out)).not.toContain('whsec_x');
    expect(JSON.stringify(out)).not.toContain('AAAA');
    expect(JSON.stringify(out)).toContain('a.pdf');
  });
});

describe('routes', () => {
  it('maps families to their owners', () => {
    expect(ownerOf('/emails/receiving/abc')).toBe('inbound-smtp');
    expect(ownerOf('/emails/abc/cancel')).toBe('sender');
    expect(ownerOf('/emailsx')).toBeUndefined();
    expect(ownerOf('/domains/1/verify')).toBe('domain-verifier');
    expect(ownerOf('/domains/1/dmarc-reports')).toBe('inbound-smtp');
    expect(ownerOf('/domains/1/dmarc-reports/x')).toBe('domain-verifier');
    expect(ownerOf('/webhooks')).toBe('webhook-dispatcher');
    expect(ownerOf('/contacts/a+b@x.com')).toBe('sender');
  });
  it("serves only a signed token's shape under /share and /downloads without a key", () => {
    expect(publicOwnerOf('/share/AZLzpFtsfY6foLHC0-T1pg.k3_X9aQ')).toBe('sender');
    expect(publicOwnerOf('/downloads/AZLzpFtsfY6foLHC0-T1pg.k3_X9aQ')).toBe('sender');
    for (const path of [
      '/share/..',
      '/share/.',
      '/share/a.b/',
      '/share/a/b.c',
      '/downloads/a..b',
      '/share/a.b.c',
      '/share/',
      '/emails/a.b',
      '/share/a%2F.b',
    ]) {
      expect(publicOwnerOf(path)).toBeUndefined();
    }
  });
  it('serves an unsubscribe token of the signed shape alone, and takes a POST there', () => {
    const token = `${'A'.repeat(64)}.${'b'.repeat(22)}`;
    expect(publicRouteOf(`/unsubscribe/${token}`)).toMatchObject({ owner: 'sender', methods: ['GET', 'HEAD', 'POST'] });
    expect(publicRouteOf('/share/AZLzpFtsfY6foLHC0-T1pg.k3_X9aQ')?.methods).toEqual(['GET', 'HEAD']);
    for (const path of [
      `/unsubscribe/${token}/`,
      `/unsubscribe/${token}x`,
      '/unsubscribe/a.b',
      `/unsubscribe/../${token}`,
    ]) {
      expect(publicRouteOf(path)).toBeUndefined();
    }
  });
  it('lets a sending key only send', () => {
    expect(isSendingRoute('POST', '/emails')).toBe(true);
    expect(isSendingRoute('POST', '/emails/batch')).toBe(true);
    expect(isSendingRoute('GET', '/emails')).toBe(false);
    expect(isSendingRoute('POST', '/domains')).toBe(false);
  });
});
