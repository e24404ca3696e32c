import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { DkimSigningError, signMessage, toCrlf } from './dkim.ts';

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
    await expect(signMessage(message, { ...key, privateKeyPem: 'not a key' })).rejects.toBeInstanceOf(DkimSigningError);
    await expect(signMessage(message, { ...key, privateKeyPem: key.privateKeyPem.slice(0, 200) })).rejects.toBeInstanceOf(DkimSigningError);
    const ed = generateKeyPairSync('ed25519');
    await expect(signMessage(message, { ...key, privateKeyPem: pem(ed.privateKey) })).rejects.toBeInstanceOf(DkimSigningError);
  });

  it('throws when mailauth refuses to sign (message without From)', async () => {
    const noFrom = Buffer.from('To: a@b.test\r\nSubject: x\r\n\r\nbody\r\n');
    await expect(signMessage(noFrom, key)).rejects.toBeInstanceOf(DkimSigningError);
  });
});

describe('toCrlf', () => {
  it('turns bare LF and bare CR into CRLF and keeps CRLF and 8-bit bytes', () => {
    const input = Buffer.concat([Buffer.from('a\nb\rc\r\nd'), Buffer.from([0xc3, 0xa9, 0x0a])]);
    expect(toCrlf(input)).toEqual(Buffer.concat([Buffer.from('a\r\nb\r\nc\r\nd'), Buffer.from([0xc3, 0xa9, 0x0d, 0x0a])]));
  });
});
