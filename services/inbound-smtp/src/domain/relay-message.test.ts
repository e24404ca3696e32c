import { describe, expect, it } from '@jest/globals';
import { envelopeAddressProblem, idempotencyKeyOf, isRelayUsername, looksLikeApiKey } from './relay-message.ts';

const message = (text: string) => Buffer.from(text, 'latin1');

describe('isRelayUsername', () => {
  it('takes postline and resend in any case, nothing else', () => {
    for (const name of ['postline', 'Postline', 'RESEND', 'resend']) expect(isRelayUsername(name)).toBe(true);
    for (const name of ['', 'admin', 'postline2', 'resend@example.com', 'apikey'])
      expect(isRelayUsername(name)).toBe(false);
  });
});

describe('looksLikeApiKey', () => {
  it('refuses an empty, over-long, spaced or non-ASCII password before the gateway is asked', () => {
    expect(looksLikeApiKey('pl_abc123')).toBe(true);
    expect(looksLikeApiKey('')).toBe(false);
    expect(looksLikeApiKey('x'.repeat(257))).toBe(false);
    expect(looksLikeApiKey('pl abc')).toBe(false);
    expect(looksLikeApiKey('pl_\r\nX-Evil: 1')).toBe(false);
    expect(looksLikeApiKey('pl_é')).toBe(false);
  });
});

describe('envelopeAddressProblem', () => {
  it('refuses what the comma-separated ASCII envelope header cannot carry', () => {
    expect(envelopeAddressProblem('user@example.com')).toBeUndefined();
    expect(envelopeAddressProblem('')).toBeUndefined();
    expect(envelopeAddressProblem('"a,b"@example.com')).toBe('comma');
    expect(envelopeAddressProblem('josé@example.com')).toBe('non-ascii');
  });
});

describe('idempotencyKeyOf', () => {
  it('reads Resend-Idempotency-Key or Postline-Idempotency-Key, whatever the case, trimmed', () => {
    expect(idempotencyKeyOf(message('From: a@b.c\r\nResend-Idempotency-Key:  order-1 \r\n\r\nbody\r\n'))).toEqual({
      ok: true,
      key: 'order-1',
    });
    expect(idempotencyKeyOf(message('postline-idempotency-key: k2\r\nSubject: x\r\n\r\n'))).toEqual({
      ok: true,
      key: 'k2',
    });
  });

  it('takes the first of them only', () => {
    const raw = message(
      'Postline-Idempotency-Key: first\r\nResend-Idempotency-Key: second\r\nResend-Idempotency-Key: third\r\n\r\n',
    );
    expect(idempotencyKeyOf(raw)).toEqual({ ok: true, key: 'first' });
  });

  it('unfolds a folded value', () => {
    expect(idempotencyKeyOf(message('Resend-Idempotency-Key: part-one\r\n part-two\r\nSubject: x\r\n\r\n'))).toEqual({
      ok: true,
      key: 'part-one part-two',
    });
  });

  it('ignores the body: a header-looking line after the empty line is not a header', () => {
    expect(idempotencyKeyOf(message('Subject: x\r\n\r\nResend-Idempotency-Key: smuggled\r\n'))).toEqual({
      ok: true,
      key: undefined,
    });
    expect(idempotencyKeyOf(message('Subject: x\r\nX-Note: see Resend-Idempotency-Key: no\r\n\r\n'))).toEqual({
      ok: true,
      key: undefined,
    });
  });

  it('treats a message without a key, or with an empty one, as without a key', () => {
    expect(idempotencyKeyOf(message('Subject: x\r\n\r\nbody'))).toEqual({ ok: true, key: undefined });
    expect(idempotencyKeyOf(message('Resend-Idempotency-Key:   \r\n\r\n'))).toEqual({ ok: true, key: undefined });
    // A message of headers only (no empty line) is all header block.
    expect(idempotencyKeyOf(message('Resend-Idempotency-Key: only'))).toEqual({ ok: true, key: 'only' });
  });

  it('refuses a key that could not travel as an HTTP header', () => {
    expect(idempotencyKeyOf(message('Resend-Idempotency-Key: caf\xe9\r\n\r\n'))).toEqual({ ok: false });
  });
});
