// How a refused recipient is filed (bounce types and subtypes as Amazon SES publishes them): from the reply code, its
// RFC 3463 enhanced status and, for servers that send none, its text. The sender files its own MTA's replies with it,
// and the inbound MX the Status and Diagnostic-Code of the DSNs that come back, so both are filed alike.
import type { BounceSubType, BounceType } from '@postline/contracts';

/** How a refused recipient is filed and whether the address joins the suppression list. */
export type BounceClass = { type: BounceType; subType: BounceSubType; suppress: boolean };

const ENHANCED = /^(?:\d{3}[ -])?\s*([245])\.(\d{1,3})\.(\d{1,3})(?=\s|$)/m;

/** The RFC 3463 status (`5.1.1`) at the start of a reply line (`550 5.1.1 No such user`), or null. */
export function parseEnhancedCode(text: string): string | null {
  const match = ENHANCED.exec(text);
  return match ? `${match[1]}.${Number(match[2])}.${Number(match[3])}` : null;
}

/**
 * Files a refused recipient as Permanent, Transient or Undetermined, with SES's subtypes. The reply code decides
 * permanent vs transient (a 4xx is never permanent, whatever its enhanced code says); the enhanced code decides the
 * subtype. Only replies about the address itself suppress it:
 *
 * | reply                                   | type/subType                       | suppress |
 * |-----------------------------------------|------------------------------------|----------|
 * | x.2.2 (mailbox full)                    | Transient/MailboxFull              | no       |
 * | x.3.4, or 552 without enhanced code     | Transient/MessageTooLarge          | no       |
 * | other 4xx (including 4.7.x greylisting) | Transient/General                  | no       |
 * | 5.7.x (policy, spam, reputation)        | Transient/ContentRejected (or AttachmentRejected when the text says attachment) | no |
 * | 5.1.2, 5.1.10, 556 without enhanced     | Permanent/NoEmail                  | yes      |
 * | 5.1.7, 5.1.8 (our sender address)       | Permanent/General                  | no       |
 * | 5.1.x, 5.2.1 (mailbox disabled)         | Permanent/General                  | yes      |
 * | 5xx without enhanced code whose text names a block list, spam, policy or sender verification (Exim sends no enhanced codes) | Transient/ContentRejected | no |
 * | 550/551/553 without enhanced code       | Permanent/General                  | yes      |
 * | other 5xx (5.0.0, 5.3–5.6.x, 554 ...)   | Permanent/General                  | no       |
 * | anything else (no 4xx/5xx code)         | Undetermined/Undetermined          | no       |
 */
export function classifyReply(code: number, enhanced: string | null, text: string): BounceClass {
  const status = enhanced ?? parseEnhancedCode(text);
  const permanent = code >= 500 && code < 600;
  if (!permanent && !(code >= 400 && code < 500)) return UNDETERMINED;
  const [, subject, detail] = status ? status.split('.').map(Number) : [];

  if (subject === 2 && detail === 2) return { type: 'Transient', subType: 'MailboxFull', suppress: false };
  if ((subject === 3 && detail === 4) || (status === null && code === 552)) {
    return { type: 'Transient', subType: 'MessageTooLarge', suppress: false };
  }
  // 4.7.x is greylisting or rate limiting, not a verdict on the content.
  if (!permanent) return { type: 'Transient', subType: 'General', suppress: false };
  if (subject === 7) {
    return contentRejected(text);
  }

  if (status === null) {
    if (POLICY_TEXT.test(text)) return contentRejected(text);
    if (code === 556) return { type: 'Permanent', subType: 'NoEmail', suppress: true };
    return { type: 'Permanent', subType: 'General', suppress: MAILBOX_REPLY_CODES.has(code) };
  }
  if (subject === 1) {
    // 5.1.7 and 5.1.8 are about our MAIL FROM address (a server may say so at RCPT time), not the recipient.
    if (detail === 7 || detail === 8) return { type: 'Permanent', subType: 'General', suppress: false };
    return { type: 'Permanent', subType: detail === 2 || detail === 10 ? 'NoEmail' : 'General', suppress: true };
  }
  return { type: 'Permanent', subType: 'General', suppress: subject === 2 && detail === 1 };
}

/**
 * Reply texts of policy refusals from servers that send no enhanced code (Exim's default `550 ... is in a
 * black list at zen.spamhaus.org`, `550 Sender verify failed`): they judge us or the message, not the mailbox.
 */
const POLICY_TEXT =
  /\b(?:black ?list(?:ed)?|block ?list(?:ed)?|blocked|spam|policy|reputation|sender verify|sender address rejected|not authori[sz]ed|attachment)/i;

/**
 * The subtype of the transient bounce a deferral becomes when its time runs out, from the server's last
 * 4xx reply: a policy or reputation block (x.7.x, or such a text) is ContentRejected, not a verdict on the
 * mailbox, and does not count towards a temporary suppression.
 */
export function expiredDeferralSubType(
  text: string,
): 'General' | 'MailboxFull' | 'MessageTooLarge' | 'ContentRejected' {
  const [, subject, detail] = (parseEnhancedCode(text) ?? '').split('.').map(Number);
  if (subject === 7 || POLICY_TEXT.test(text)) return 'ContentRejected';
  if (subject === 2 && detail === 2) return 'MailboxFull';
  if (subject === 3 && detail === 4) return 'MessageTooLarge';
  return 'General';
}

/** A refusal of the message or of our sending, never of the mailbox: AttachmentRejected when it says so. */
function contentRejected(text: string): BounceClass {
  return {
    type: 'Transient',
    subType: /attachment/i.test(text) ? 'AttachmentRejected' : 'ContentRejected',
    suppress: false,
  };
}

/** RFC 5321 reply codes that mean "this mailbox", used only when the server sent no enhanced code. */
const MAILBOX_REPLY_CODES = new Set([550, 551, 553]);

const UNDETERMINED: BounceClass = { type: 'Undetermined', subType: 'Undetermined', suppress: false };
