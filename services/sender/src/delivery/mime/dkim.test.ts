import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { createDkimSigner, DkimSigningError } from './dkim.ts';

const signMessage = createDkimSigner();

function pem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const dnsValue = `v=DKIM1; k=rsa; p=${rsa.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
const key = { domain: 'example.com', selector: 'postline', privateKeyPem: pem(rsa.privateKey) };

const resolver = (name: string, type: string): Promise<string[][]> => {
  if (type === 'TXT' && name === 'postline._domainkey.example.com') return Promise.resolve([[dnsValue]]);
  return Promise.reject(Object.assign(new Error(`no ${type} for ${name}`), { code: 'ENOTFOUND' }));
};

const message = Buffer.from(
  [
    'From: Acme <hello@example.com>',
    'To: someone@recipient.test',
    'Subject: Hello',
    'Date: Sat, 21 Nov 2026 09:00:00 +0000',
    'Message-ID: <1@example.com>',
    'List-Unsubscribe: <https://example.com/u/1>',
    'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Line one',
    'Line two with a bare CR\rand the end',
    '',
  ].join('\n'),
);

describe('signMessage', () => {
  it('signs so that a verifier passes it, over CRLF line endings, with List-Unsubscribe-Post in h=', async () => {
    const signed = await signMessage(message, key);
    const text = signed.toString();
    expect(text).toMatch(/^DKIM-Signature: /);
    expect(text).not.toMatch(/[^\r]\n|\r(?!\n)/);
    const header = /^DKIM-Signature:[\s\S]*?(?=\r\n\S)/.exec(text)![0].replace(/\r\n\s+/g, ' ');
    expect(header).toMatch(/a=rsa-sha256/);
    expect(header).toMatch(/c=relaxed\/relaxed/);
    expect(header.toLowerCase()).toMatch(/h=[^;]*list-unsubscribe-post/);

    const result = await dkimVerify(signed, { resolver });
    expect(result.results.map((r) => r.status.result)).toEqual(['pass']);
  });

  it('does not pass once the signed body is changed', async () => {
    const signed = (await signMessage(message, key)).toString().replace('Line one', 'Line 1');
    const result = await dkimVerify(Buffer.from(signed), { resolver });
    expect(result.results[0]?.status.result).not.toBe('pass'); // mailauth says neutral: body hash did not verify
  });

  it('throws instead of returning an unsigned message for a garbage, truncated or Ed25519 key', async () => {
    await expect(signMessage(message, { ...key, privateKeyPem: 'not a key' })).rejects.toThrow(DkimSigningError);
    await expect(signMessage(message, { ...key, privateKeyPem: key.privateKeyPem.slice(0, 200) })).rejects.toThrow(
      DkimSigningError,
    );
    const ed = generateKeyPairSync('ed25519');
    await expect(signMessage(message, { ...key, privateKeyPem: pem(ed.privateKey) })).rejects.toThrow(DkimSigningError);
  });

  it('throws instead of signing a message without From', async () => {
    const noFrom = Buffer.from('To: a@b.test\r\nSubject: x\r\n\r\nbody\r\n');
    await expect(signMessage(noFrom, key)).rejects.toThrow(DkimSigningError);
  });
});

describe('signMessage on messages of every shape', () => {
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const otherKey = { domain: 'other.test', selector: 's2', privateKeyPem: pem(other.privateKey) };
  const otherDns = `v=DKIM1; k=rsa; p=${other.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
  const bothResolver = (name: string, type: string): Promise<string[][]> =>
    name === 's2._domainkey.other.test' && type === 'TXT' ? Promise.resolve([[otherDns]]) : resolver(name, type);
  const verify = async (signed: Buffer) =>
    (await dkimVerify(signed, { resolver: bothResolver })).results.map((r) => r.status.result);

  it.each([
    ['no body at all', 'From: a@example.com\r\nSubject: none'],
    ['an empty body', 'From: a@example.com\r\nSubject: empty\r\n\r\n'],
    ['a body without a final line break', 'From: a@example.com\r\nSubject: x\r\n\r\nlast line'],
    ['trailing empty lines and spaces', 'From: a@example.com\r\nSubject: x\r\n\r\nline  with   spaces \t\r\n\r\n\r\n'],
    [
      'folded headers and a repeated signed header',
      'From: a@example.com\r\nSubject: a long\r\n\tfolded subject\r\nTo: x@y.test,\r\n z@y.test\r\nTo: again@y.test\r\n\r\nbody\r\n',
    ],
  ])('verifies a message with %s', async (_name, text) => {
    expect(await verify(await signMessage(Buffer.from(text), key))).toEqual(['pass']);
  });

  it('verifies 8-bit bytes in the body as sent', async () => {
    const raw = Buffer.concat([
      Buffer.from('From: a@example.com\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n'),
      Buffer.from('caf\u00e9 \u2713\r\n', 'utf8'),
    ]);
    expect(await verify(await signMessage(raw, key))).toEqual(['pass']);
  });

  it('signs each domain with its own key when keys alternate', async () => {
    for (let i = 0; i < 3; i++) {
      const a = await signMessage(message, key);
      const b = await signMessage(Buffer.from(message.toString().replace('example.com>', 'other.test>')), otherKey);
      expect(a.toString()).toMatch(/d=example\.com;/);
      expect(b.toString()).toMatch(/d=other\.test;/);
      expect(await verify(a)).toEqual(['pass']);
      expect(await verify(b)).toEqual(['pass']);
    }
  });

  it('refuses an RSA key shorter than 1024 bits, which verifiers must reject', async () => {
    const short = generateKeyPairSync('rsa', { modulusLength: 768 });
    await expect(signMessage(message, { ...key, privateKeyPem: pem(short.privateKey) })).rejects.toThrow(
      DkimSigningError,
    );
  });
});
