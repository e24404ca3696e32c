/**
 * Whether the MX takes mail for this local part at a return-path domain: a VERP address (`b.…`, its tag
 * checked only once the message is in) or the List-Unsubscribe mailbox (`unsubscribe`). Anything else is
 * refused at RCPT.
 */
export function acceptsReturnPathLocalPart(local: string): boolean {
  const lower = local.toLowerCase();
  return lower === 'unsubscribe' || lower.startsWith('b.');
}
