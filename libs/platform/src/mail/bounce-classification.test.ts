import { describe, expect, it } from '@jest/globals';
import { classifyReply, expiredDeferralSubType, parseEnhancedCode } from './bounce-classification.ts';

describe('parseEnhancedCode', () => {
  it('reads the status after the reply code or at the start of the text', () => {
    expect(parseEnhancedCode('550 5.1.1 <a@b.test>: user unknown')).toBe('5.1.1');
    expect(parseEnhancedCode('452-4.2.2 The mailbox is full\n452 4.2.2 try later')).toBe('4.2.2');
    expect(parseEnhancedCode('5.7.26 Unauthenticated email')).toBe('5.7.26');
    expect(parseEnhancedCode('556 5.1.10 null MX')).toBe('5.1.10');
  });

  it('ignores dotted numbers that are not a status at the start of a line', () => {
    expect(parseEnhancedCode('550 Requested action not taken: mailbox unavailable')).toBeNull();
    expect(parseEnhancedCode('550 see https://x.test/v1.2.3 for details')).toBeNull();
    expect(parseEnhancedCode('550 3.1.1 not a class')).toBeNull();
    expect(parseEnhancedCode('')).toBeNull();
  });
});

describe('classifyReply', () => {
  it('suppresses a bad mailbox and files a missing domain or null MX as NoEmail', () => {
    expect(classifyReply(550, '5.1.1', '550 5.1.1 user unknown')).toEqual({
      type: 'Permanent',
      subType: 'General',
      suppress: true,
    });
    expect(classifyReply(550, '5.1.2', '')).toEqual({ type: 'Permanent', subType: 'NoEmail', suppress: true });
    expect(classifyReply(556, '5.1.10', '')).toEqual({ type: 'Permanent', subType: 'NoEmail', suppress: true });
    expect(classifyReply(550, '5.2.1', 'mailbox disabled')).toEqual({
      type: 'Permanent',
      subType: 'General',
      suppress: true,
    });
  });

  it('reads the enhanced code from the text when none is given', () => {
    expect(classifyReply(550, null, '550 5.1.1 no such user')).toEqual({
      type: 'Permanent',
      subType: 'General',
      suppress: true,
    });
  });

  it('never suppresses mailbox full, even as a 5xx', () => {
    expect(classifyReply(552, '5.2.2', 'mailbox full')).toEqual({
      type: 'Transient',
      subType: 'MailboxFull',
      suppress: false,
    });
    expect(classifyReply(452, '4.2.2', 'mailbox full')).toEqual({
      type: 'Transient',
      subType: 'MailboxFull',
      suppress: false,
    });
  });

  it('files a too large message as MessageTooLarge', () => {
    expect(classifyReply(552, '5.3.4', 'too big')).toEqual({
      type: 'Transient',
      subType: 'MessageTooLarge',
      suppress: false,
    });
    expect(classifyReply(552, null, '552 message size exceeds fixed maximum')).toEqual({
      type: 'Transient',
      subType: 'MessageTooLarge',
      suppress: false,
    });
  });

  it('files 5.7.x policy blocks as content rejections without suppressing the recipient', () => {
    expect(classifyReply(550, '5.7.1', 'spam detected')).toEqual({
      type: 'Transient',
      subType: 'ContentRejected',
      suppress: false,
    });
    expect(classifyReply(554, '5.7.1', 'Attachment type not allowed')).toEqual({
      type: 'Transient',
      subType: 'AttachmentRejected',
      suppress: false,
    });
    expect(classifyReply(550, '5.7.26', 'DMARC')).toEqual({
      type: 'Transient',
      subType: 'ContentRejected',
      suppress: false,
    });
  });

  it('keeps every 4xx transient and unsuppressed, greylisting included', () => {
    expect(classifyReply(451, '4.7.1', 'greylisted')).toEqual({
      type: 'Transient',
      subType: 'General',
      suppress: false,
    });
    expect(classifyReply(421, null, 'try later')).toEqual({ type: 'Transient', subType: 'General', suppress: false });
    // a 4xx reply with a 5.x.x status is still a 4xx
    expect(classifyReply(450, '5.1.1', '')).toEqual({ type: 'Transient', subType: 'General', suppress: false });
  });

  it('bounces other 5xx without suppressing unless the code alone names the mailbox', () => {
    expect(classifyReply(554, '5.0.0', 'transaction failed')).toEqual({
      type: 'Permanent',
      subType: 'General',
      suppress: false,
    });
    expect(classifyReply(550, '5.4.4', 'unable to route')).toEqual({
      type: 'Permanent',
      subType: 'General',
      suppress: false,
    });
    expect(classifyReply(554, null, 'transaction failed')).toEqual({
      type: 'Permanent',
      subType: 'General',
      suppress: false,
    });
    expect(classifyReply(550, null, 'mailbox unavailable')).toEqual({
      type: 'Permanent',
      subType: 'General',
      suppress: true,
    });
    expect(classifyReply(556, null, 'domain does not accept mail')).toEqual({
      type: 'Permanent',
      subType: 'NoEmail',
      suppress: true,
    });
  });

  it('never suppresses a recipient for a refusal of our sender address (5.1.7, 5.1.8), even at RCPT time', () => {
    expect(
      classifyReply(550, '5.1.8', '550 5.1.8 <b@send.acme.test>: Sender address rejected: Domain not found'),
    ).toEqual({
      type: 'Permanent',
      subType: 'General',
      suppress: false,
    });
    expect(classifyReply(553, '5.1.7', 'bad sender mailbox syntax')).toEqual({
      type: 'Permanent',
      subType: 'General',
      suppress: false,
    });
  });

  it('files policy refusals without an enhanced code (Exim) as content rejections without suppressing', () => {
    const rejected = { type: 'Transient', subType: 'ContentRejected', suppress: false };
    expect(classifyReply(550, null, '550 rejected because 192.0.2.1 is in a black list at zen.spamhaus.org')).toEqual(
      rejected,
    );
    expect(classifyReply(550, null, '550 Sender verify failed')).toEqual(rejected);
    expect(classifyReply(554, null, '554 Message rejected as spam')).toEqual(rejected);
    expect(classifyReply(550, null, '550 This message contains a forbidden attachment')).toEqual({
      ...rejected,
      subType: 'AttachmentRejected',
    });
  });

  it('files a deferral whose time ran out by its last reply: a block is ContentRejected, not a mailbox problem', () => {
    expect(expiredDeferralSubType('451 4.7.1 Service unavailable; client host blocked using zen.spamhaus.org')).toBe(
      'ContentRejected',
    );
    expect(expiredDeferralSubType('450 Sender rejected by policy')).toBe('ContentRejected');
    expect(expiredDeferralSubType('452 4.2.2 Mailbox full')).toBe('MailboxFull');
    expect(expiredDeferralSubType('452 4.3.4 Message too big for now')).toBe('MessageTooLarge');
    expect(expiredDeferralSubType('451 4.3.0 Temporary local problem')).toBe('General');
    expect(expiredDeferralSubType('421 try again later')).toBe('General');
  });

  it('leaves a reply it cannot read undetermined', () => {
    expect(classifyReply(0, null, 'garbage')).toEqual({
      type: 'Undetermined',
      subType: 'Undetermined',
      suppress: false,
    });
    expect(classifyReply(250, null, 'ok')).toEqual({ type: 'Undetermined', subType: 'Undetermined', suppress: false });
  });
});
