import { describe, expect, it } from '@jest/globals';
import { INBOUND_LINK_PATH, PUBLIC_LINK_PATH, publicLinkIdentity } from '@postline/contracts';
import { createLinkSigner, linkUrl, type Link } from './public-links.ts';

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

  it('are the tokens issued before, byte for byte (links already handed out keep working)', () => {
    const pinned = createLinkSigner('public-links-test-key-0123456789');
    const expiresAt = new Date('2030-01-02T03:04:05.678Z');
    const attachmentId = '0192f3a4-5b6c-7d8e-9fa0-000000000003';
    expect(pinned.sign({ ...download, attachmentId, expiresAt })).toBe(
      'AQGS86RbbH2On6CxwtPk9aYBkvOkW2x9jp-gAAAAAAADAbjglJsu.yZ4XivIE7EDo4OQHnsNJaQ',
    );
    expect(pinned.sign({ ...share, expiresAt })).toBe(
      'AAGS86RbbH2On6CxwtPk9aYAAAAAAAAAAAAAAAAAAAAAAbjglJsu.wfIUhna1liEF3tC8ig0ISA',
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

describe('kinds', () => {
  it('keep the token layout of the links issued before the signer moved (share = 0, download = 1)', () => {
    // Tokens the sender's own signer issued before the move, with this key: they still verify.
    const before = new Date('2026-11-25T10:30:00.000Z');
    expect(
      signer.verify('AAGS86RbbH2On6CxwtPk9aYAAAAAAAAAAAAAAAAAAAAAAaISXMeA.BH8SHtnxv7-DgUQO6pnZMg', 'share', before),
    ).toEqual(share);
    expect(
      signer.verify('AQGS86RbbH2On6CxwtPk9aYBkvOkW2x9jp-gAAAAAAABAaISXMeA.EGIIbVd3AOZNi1ZBSqNk3g', 'download', before),
    ).toEqual(download);
    const kindByte = (link: Link) => Buffer.from(signer.sign(link).split('.')[0]!, 'base64url')[0];
    expect(kindByte(share)).toBe(0);
    expect(kindByte(download)).toBe(1);
    expect(kindByte({ ...download, kind: 'inbound' })).toBe(2);
  });

  it('never open a link of another kind: an inbound link is served at /inbound and opens only as inbound', () => {
    const inbound: Link = { ...download, kind: 'inbound' };
    const token = signer.sign(inbound);
    expect(signer.verify(token, 'inbound', now)).toEqual(inbound);
    expect(signer.verify(token, 'download', now)).toBeUndefined();
    expect(signer.verify(signer.sign(download), 'inbound', now)).toBeUndefined();
    expect(linkUrl('https://mail.example.com', 'inbound', token)).toBe(`https://mail.example.com/inbound/${token}`);
    expect(INBOUND_LINK_PATH.test(`/inbound/${token}`)).toBe(true);
  });
});
