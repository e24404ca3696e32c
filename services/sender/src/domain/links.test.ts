import { describe, expect, it } from '@jest/globals';
import { PUBLIC_LINK_PATH, publicLinkIdentity } from '@postline/contracts';
import { createLinkSigner, linkUrl, MAX_SHARE_TTL_MS, parseShareTtl, type Link } from './links.ts';

const signer = createLinkSigner('links-test-key-0123456789');
const now = new Date('2026-11-25T10:00:00.000Z');
const download: Link = {
  kind: 'download',
  emailId: '0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6',
  attachmentId: '0192f3a4-5b6c-7d8e-9fa0-000000000001',
  expiresAt: new Date('2026-11-25T11:00:00.000Z'),
};
const share: Link = { kind: 'share', emailId: download.emailId, attachmentId: null, expiresAt: download.expiresAt };

describe('signed links', () => {
  it('round-trip what they name, as a short URL-safe token', () => {
    const token = signer.sign(download);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(token.length).toBeLessThan(80);
    expect(signer.verify(token, 'download', now)).toEqual(download);
    expect(signer.verify(signer.sign(share), 'share', now)).toEqual(share);
    expect(linkUrl('https://mail.example.com/', 'share', token)).toBe(`https://mail.example.com/share/${token}`);
    expect(linkUrl('https://example.com/postline', 'download', token)).toBe(
      `https://example.com/postline/downloads/${token}`,
    );
  });

  it('have the shape the gateway lets through, and a prefix that names the link whatever its expiry', () => {
    const token = signer.sign(download);
    expect(PUBLIC_LINK_PATH.test(`/downloads/${token}`)).toBe(true);
    const identity = (link: Link) =>
      publicLinkIdentity(`/${link.kind === 'share' ? 'share' : 'downloads'}/${signer.sign(link)}`);
    const later = { ...download, expiresAt: new Date(download.expiresAt.getTime() + 1234) };
    expect(identity(later)).toBe(identity(download));
    expect(identity({ ...share, expiresAt: later.expiresAt })).toBe(identity(share));
    expect(identity({ ...download, attachmentId: '0192f3a4-5b6c-7d8e-9fa0-000000000002' })).not.toBe(
      identity(download),
    );
    expect(identity({ ...share, emailId: '0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a7' })).not.toBe(identity(share));
    expect(identity(share)).not.toBe(identity(download));
    expect(publicLinkIdentity('/downloads/not-a-token')).toBeUndefined();
  });

  it('name nothing once expired, for the other kind, or under another key', () => {
    const token = signer.sign(download);
    expect(signer.verify(token, 'download', download.expiresAt)).toBeUndefined();
    expect(signer.verify(token, 'download', new Date(download.expiresAt.getTime() - 1))).toEqual(download);
    expect(signer.verify(token, 'share', now)).toBeUndefined();
    expect(createLinkSigner('another-key-0123456789').verify(token, 'download', now)).toBeUndefined();
  });

  it('name nothing when any part of the token is edited', () => {
    const token = signer.sign(share);
    const [payload = '', tag = ''] = token.split('.');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (let i = 0; i < payload.length; i++)
      expect(signer.verify(`${flip(payload, i)}.${tag}`, 'share', now)).toBeUndefined();
    expect(signer.verify(`${payload}.${flip(tag, 3)}`, 'share', now)).toBeUndefined();
    for (const bad of ['', '.', payload, `${payload}.${tag}.x`, `${payload}.${tag}=`, `${payload}!.${tag}`]) {
      expect(signer.verify(bad, 'share', now)).toBeUndefined();
    }
  });
});

describe('parseShareTtl', () => {
  it("reads the reference's durations, 48 hours when absent", () => {
    expect(parseShareTtl('10m')).toEqual({ ok: true, ms: 600_000 });
    expect(parseShareTtl('2 hours')).toEqual({ ok: true, ms: 7_200_000 });
    expect(parseShareTtl('1 day')).toEqual({ ok: true, ms: 86_400_000 });
    expect(parseShareTtl(' 90 seconds ')).toEqual({ ok: true, ms: 90_000 });
    expect(parseShareTtl('48h')).toEqual({ ok: true, ms: MAX_SHARE_TTL_MS });
    expect(parseShareTtl(undefined)).toEqual({ ok: true, ms: MAX_SHARE_TTL_MS });
  });

  it('refuses anything else as a validation_error', () => {
    for (const bad of ['3 days', '49h', '0m', 'soon', '10', '1 week', '-5m', 10, true]) {
      expect(parseShareTtl(bad)).toMatchObject({ ok: false, refusal: { name: 'validation_error' } });
    }
  });
});
