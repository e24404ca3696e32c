import { afterAll, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { ComposeInput } from '../../src/message/mime/compose-email.ts';
import {
  CompositionError,
  createComposerPool,
  createInProcessComposer,
} from '../../src/delivery/mime/composer-pool.ts';
import { DkimSigningError } from '../../src/delivery/mime/dkim.ts';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = {
  domain: 'acme.test',
  selector: 'pl',
  privateKeyPem: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
};
const dnsValue = `v=DKIM1; k=rsa; p=${rsa.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
const resolver = (name: string, type: string): Promise<string[][]> =>
  type === 'TXT' && name === 'pl._domainkey.acme.test'
    ? Promise.resolve([[dnsValue]])
    : Promise.reject(Object.assign(new Error(`no ${type} for ${name}`), { code: 'ENOTFOUND' }));

const attachment = Buffer.from([0, 1, 2, 250, 255, 10, 13, 65]);
const input: ComposeInput = {
  from: { name: 'Acme', address: 'orders@acme.test' },
  to: ['Jane <jane@example.com>'],
  cc: [],
  replyTo: [],
  subject: 'Your order ✓',
  html: '<p>Thanks for your order.</p>',
  text: null,
  headers: [{ name: 'X-Entity-Ref-ID', value: 'ref-7' }],
  attachments: [
    { filename: 'receipt.bin', contentType: 'application/octet-stream', contentId: null, content: attachment },
  ],
  messageId: '<0199a1b2-0000-7000-8000-000000000007@acme.test>',
  date: new Date('2026-11-21T10:00:00.000Z'),
};

async function verified(raw: Buffer): Promise<string[]> {
  const { results } = await dkimVerify(raw, { resolver });
  return results.map((r: { status: { result: string } }) => r.status.result);
}

const pool = createComposerPool({ threads: 2 });
const inProcessComposer = createInProcessComposer();
afterAll(async () => {
  await pool.close();
});

describe('composer pool (worker threads)', () => {
  it('starts no thread before its first job, and another only while every thread has a job in hand', async () => {
    const lazy = createComposerPool({ threads: 2 });
    try {
      expect(lazy.workers()).toHaveLength(0);
      // One job at a time: the one thread is free for each.
      await lazy.compose(input, key);
      await lazy.compose({ ...input, messageId: '<0199a1b2-0000-7000-8000-0000000000aa@acme.test>' }, key);
      expect(lazy.workers()).toHaveLength(1);
      // Jobs at once: a second thread, and no more than the pool's size.
      await Promise.all(Array.from({ length: 6 }, () => lazy.compose(input, key)));
      expect(lazy.workers()).toHaveLength(2);
    } finally {
      await lazy.close();
    }
  });

  it('returns a signed message that verifies, with the attachment bytes and headers intact', async () => {
    const raw = await pool.compose(input, key);
    expect(Buffer.isBuffer(raw)).toBe(true);
    expect(await verified(raw)).toEqual(['pass']);
    const text = raw.toString('latin1');
    expect(text).toMatch(/^DKIM-Signature: /);
    expect(text).toContain('X-Entity-Ref-ID: ref-7');
    expect(text).toContain('Message-ID: <0199a1b2-0000-7000-8000-000000000007@acme.test>');
    expect(text).toContain(attachment.toString('base64'));
    // The same message as composing on this thread, but for the random MIME boundaries and the signature.
    const local = (await inProcessComposer.compose(input, key)).toString('latin1');
    const shape = (m: string) =>
      m
        .replace(/^DKIM-Signature:[^]*?\r\n(?=\S)/, '')
        .replace(/-{2,}_NmP-[0-9a-f-]+-Part_\d+/g, 'B')
        .replace(/boundary="[^"]+"/g, '');
    expect(shape(text)).toBe(shape(local));
  });

  it('spreads concurrent jobs over its threads and answers each with its own message', async () => {
    const ids = Array.from(
      { length: 20 },
      (_, i) => `<0199a1b2-0000-7000-8000-${String(i).padStart(12, '0')}@acme.test>`,
    );
    const results = await Promise.all(ids.map((messageId) => pool.compose({ ...input, messageId }, key)));
    results.forEach((raw, i) => expect(raw.toString('latin1')).toContain(`Message-ID: ${ids[i]}`));
    expect((await Promise.all(results.slice(0, 3).map(verified))).flat()).toEqual(['pass', 'pass', 'pass']);
  });

  it('keeps a signing failure a DkimSigningError and a refused email a CompositionError, on a thread or not', async () => {
    for (const composer of [pool, inProcessComposer]) {
      await expect(composer.compose(input, { ...key, privateKeyPem: 'not a key' })).rejects.toThrow(DkimSigningError);
      const refused = composer.compose({ ...input, messageId: 'no brackets' }, key);
      await expect(refused).rejects.toThrow(CompositionError);
      await expect(refused).rejects.toThrow(/Invalid Message-ID/);
    }
  });

  it('fails the jobs of a thread that dies, and starts another for the jobs that follow', async () => {
    const [first] = pool.workers();
    // Jobs large enough (tens of milliseconds each) that the thread is still busy with them when it is
    // terminated: with the small message all six could be done before, and nothing would fail.
    const heavy: ComposeInput = {
      ...input,
      attachments: [{ ...input.attachments[0]!, content: Buffer.alloc(8 * 1024 * 1024, 7) }],
    };
    const pending = Array.from({ length: 6 }, () =>
      pool.compose(heavy, key).then(
        () => 'ok',
        (err: Error) =>
          err instanceof CompositionError || err instanceof DkimSigningError
            ? `the email's fault: ${err.message}`
            : err.message,
      ),
    );
    await first!.terminate();
    const outcomes = await Promise.all(pending);
    // Jobs on the dead thread fail, and not as the email's fault (their attempts are retried); the others complete.
    expect(outcomes.some((o) => /^composer worker exited/.test(o))).toBe(true);
    expect(outcomes).toContain('ok');
    expect(pool.workers()).not.toContain(first);
    // Jobs at once again: a second thread starts beside the one left, and both answer.
    const again = await Promise.all(Array.from({ length: 6 }, () => pool.compose(input, key)));
    expect(pool.workers()).toHaveLength(2);
    expect(pool.workers()).not.toContain(first);
    expect(await verified(again[0]!)).toEqual(['pass']);
  });
});
