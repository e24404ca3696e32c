import { describe, expect, it } from '@jest/globals';
import { formatSmtpReply, smtpReply, smtpReplyError, smtpReplyText } from './smtp-reply.ts';

describe('smtpReply', () => {
  it('writes the enhanced code after the basic code', () => {
    const reply = smtpReply(550, '5.7.1', '<a@b.test>: mx.test does not accept mail for b.test');
    expect(formatSmtpReply(reply)).toBe('550 5.7.1 <a@b.test>: mx.test does not accept mail for b.test');
    expect(smtpReplyText(reply)).toBe('5.7.1 <a@b.test>: mx.test does not accept mail for b.test');
    expect(formatSmtpReply(smtpReply(556, '5.1.10', 'null MX'))).toBe('556 5.1.10 null MX');
  });

  it("refuses an enhanced code whose class is not the basic code's, or that is malformed", () => {
    expect(() => smtpReply(550, '4.3.0', 'x')).toThrow(/class/);
    expect(() => smtpReply(451, '5.3.0', 'x')).toThrow(/class/);
    expect(() => smtpReply(250, '2.0', 'x')).toThrow(/class/);
    expect(() => smtpReply(354, '3.0.0', 'x')).toThrow(/class/);
  });

  it('is the Error an smtp-server hook answers with', () => {
    const err = smtpReplyError(smtpReply(452, '4.5.3', 'Too many recipients'));
    expect(err).toBeInstanceOf(Error);
    expect(err.responseCode).toBe(452);
    expect(err.message).toBe('4.5.3 Too many recipients');
  });
});
