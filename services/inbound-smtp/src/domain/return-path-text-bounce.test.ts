import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { firstText, headerValue, parseMime } from './multipart-report.ts';
import { readTextBounce, type TextMessage } from './return-path-text-bounce.ts';

const messageOf = (name: string): TextMessage => {
  const root = parseMime(readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url)));
  return {
    subject: headerValue(root.headers, 'subject') ?? '',
    from: headerValue(root.headers, 'from') ?? '',
    autoSubmitted: headerValue(root.headers, 'auto-submitted'),
    text: firstText(root),
  };
};

describe('readTextBounce', () => {
  it("files each recipient of a qmail bounce from its own paragraph, never from the message's copy", () => {
    expect(readTextBounce(messageOf('qmail-failed.eml'))).toEqual({
      kind: 'failed',
      recipients: [
        {
          address: 'henry@example.com',
          bounce: expect.objectContaining({
            type: 'Permanent',
            subType: 'General',
            diagnosticCode: ['Remote host said: 550 5.1.1 <henry@example.com>... User unknown'],
          }),
          suppress: true,
        },
        {
          address: 'ivy@nohost.example.com',
          bounce: expect.objectContaining({ type: 'Permanent', subType: 'NoEmail' }),
          suppress: true,
        },
        {
          address: 'jack@example.com',
          bounce: expect.objectContaining({ type: 'Permanent', subType: 'General' }),
          // A routing loop (5.4.6): permanent, but no fault of the address.
          suppress: false,
        },
      ],
    });
  });

  it('is not a bounce: an auto-reply, or mail that claims nothing', () => {
    expect(readTextBounce(messageOf('auto-reply.eml'))).toEqual({ kind: 'not-a-bounce' });
    expect(
      readTextBounce({
        subject: 'Hello',
        from: 'someone@example.com',
        autoSubmitted: undefined,
        text: '550 5.1.1 looks like a bounce',
      }),
    ).toEqual({
      kind: 'not-a-bounce',
    });
    expect(
      readTextBounce({ subject: 'Out of office', from: 'MAILER-DAEMON@x.test', autoSubmitted: undefined, text: '' }),
    ).toEqual({ kind: 'not-a-bounce' });
  });

  it('files a bounce without structure from the first SMTP reply in its text, Undetermined without one', () => {
    const exchange = readTextBounce({
      subject: 'Undeliverable: Quarterly report',
      from: 'System Administrator <postmaster@corp.example.com>',
      autoSubmitted: undefined,
      text: 'Your message did not reach some or all of the intended recipients.\r\n\r\n      erin@corp.example.com on 24/11/2026 10:18\r\n            #550 5.1.1 RESOLVER.ADR.RecipNotFound; not found ##\r\n',
    });
    expect(exchange).toEqual({
      kind: 'failed',
      recipients: [
        {
          address: null,
          bounce: expect.objectContaining({
            type: 'Permanent',
            subType: 'General',
            diagnosticCode: ['#550 5.1.1 RESOLVER.ADR.RecipNotFound; not found ##'],
          }),
          suppress: true,
        },
      ],
    });
    const vague = readTextBounce({
      subject: 'failure notice',
      from: 'MAILER-DAEMON@x.test',
      autoSubmitted: undefined,
      text: 'It did not work out. Giving up on 192.0.2.61.',
    });
    expect(vague).toEqual({
      kind: 'failed',
      recipients: [
        {
          address: null,
          bounce: expect.objectContaining({ type: 'Undetermined', subType: 'Undetermined', diagnosticCode: [] }),
          suppress: false,
        },
      ],
    });
    const fromDaemon = readTextBounce({
      subject: 'Notice',
      from: 'Mail Delivery Subsystem <mailer-daemon@x.test>',
      autoSubmitted: 'auto-generated',
      text: '552 5.2.2 over quota',
    });
    expect(fromDaemon).toMatchObject({
      kind: 'failed',
      recipients: [
        { bounce: { type: 'Transient', subType: 'MailboxFull', diagnosticCode: ['smtp; 552 5.2.2 over quota'] } },
      ],
    });
  });

  it('is a delay warning when the subject says so and not failure', () => {
    expect(
      readTextBounce({
        subject: 'Warning: message still undelivered after 4 hours',
        from: 'postmaster@x.test',
        autoSubmitted: undefined,
        text: 'Will keep trying.',
      }),
    ).toEqual({
      kind: 'delayed',
    });
  });
});
