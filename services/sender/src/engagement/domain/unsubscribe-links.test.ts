import { describe, expect, it } from '@jest/globals';
import { publicLinkIdentity, UNSUBSCRIBE_LINK_PATH, unsubscribeLinkTeam } from '@postline/contracts';
import {
  createUnsubscribeSigner,
  UNSUBSCRIBE_PATH,
  unsubscribeUrl,
  type UnsubscribeLink,
} from './unsubscribe-links.ts';

const signer = createUnsubscribeSigner('unsubscribe-test-key-0123456789');
const link: UnsubscribeLink = {
  teamId: '0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6',
  contactId: '0192f3a4-5b6c-7d8e-9fa0-000000000001',
  broadcastId: '0192f3a4-5b6c-7d8e-9fa0-000000000002',
};

describe('unsubscribe links', () => {
  it('round-trip what they name, at the path the gateway serves without a key', () => {
    const token = signer.sign(link);
    expect(signer.verify(token)).toEqual(link);
    const url = unsubscribeUrl('https://mail.example.com/', token);
    expect(url).toBe(`https://mail.example.com${UNSUBSCRIBE_PATH}/${token}`);
    const path = new URL(url).pathname;
    expect(UNSUBSCRIBE_LINK_PATH.test(path)).toBe(true);
    // The gateway reads the (unverified) team before forwarding a POST, and counts requests per link.
    expect(unsubscribeLinkTeam(path)).toBe(link.teamId);
    expect(publicLinkIdentity(path)).toBe(`unsubscribe/${token.split('.')[0]}`);
    expect(publicLinkIdentity(path)).not.toBe(
      publicLinkIdentity(`${UNSUBSCRIBE_PATH}/${signer.sign({ ...link, contactId: link.broadcastId })}`),
    );
    expect(unsubscribeLinkTeam('/share/a.b')).toBeUndefined();
  });

  it('are the tokens issued before, byte for byte (links in sent emails keep working)', () => {
    const token = 'AZLzpFtsfY6foLHC0-T1pgGS86RbbH2On6AAAAAAAAEBkvOkW2x9jp-gAAAAAAAC.18IANMKwGp1IzgWoPO3XTw';
    expect(signer.sign(link)).toBe(token);
    expect(signer.verify(token)).toEqual(link);
  });

  it('name nothing when edited, malformed or signed under another key', () => {
    const token = signer.sign(link);
    const [payload = '', tag = ''] = token.split('.');
    const flip = (char: string) => (char === 'A' ? 'B' : 'A');
    expect(signer.verify(`${flip(payload[0]!)}${payload.slice(1)}.${tag}`)).toBeUndefined();
    expect(signer.verify(`${payload}.${tag.slice(0, -1)}${flip(tag.at(-1)!)}`)).toBeUndefined();
    expect(signer.verify(`${payload}.${tag}x`)).toBeUndefined();
    expect(signer.verify(`${payload}`)).toBeUndefined();
    expect(signer.verify('')).toBeUndefined();
    expect(createUnsubscribeSigner('another-key').verify(token)).toBeUndefined();
  });
});
