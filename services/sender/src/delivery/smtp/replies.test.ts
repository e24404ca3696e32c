import { describe, expect, it } from '@jest/globals';
import { smtpReply } from '@postline/platform';
import { LOCAL_REPLIES, localOutcome, localReply } from './replies.ts';

describe('LOCAL_REPLIES', () => {
  it.each(Object.entries(LOCAL_REPLIES))('%s follows the one reply policy (enhanced class = reply class)', (_, r) => {
    expect(smtpReply(r.code, r.enhanced, r.text)).toEqual(r);
  });

  it('writes a reply we make up as the same line a server would send, with the detail after it', () => {
    expect(localReply(LOCAL_REPLIES.dnsTemporary, 'example.com')).toEqual({
      code: 451,
      enhanced: '4.4.3',
      response: '451 4.4.3 Temporary DNS failure resolving the recipient domain: example.com',
      tls: false,
    });
    expect(localOutcome('a@example.com', LOCAL_REPLIES.noSuchDomain, null)).toMatchObject({
      status: 'bounced',
      response: '550 5.1.2 Recipient domain does not exist',
    });
  });
});
