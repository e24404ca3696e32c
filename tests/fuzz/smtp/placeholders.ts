// Placeholder values sessions are rendered with: the return-path domain's VERP addresses, the relay's AUTH blobs.
import { verpAddress, verpKeyOf } from '@postline/platform';

/**
 * The MX's return-path placeholders: `rp`, VERP addresses there that verify (`verp` with a recipient
 * position, `verp-x` without) and one whose tag does not (`verp-forged`), for an email id that need not exist.
 */
export function returnPathVars(returnPath: string, secretKey: string): Record<string, string> {
  const key = verpKeyOf(secretKey);
  const emailId = '0195f3a2-0000-7000-8000-00000000f022';
  const verp = verpAddress({ emailId, recipient: 0, returnPath, key });
  return {
    rp: returnPath,
    verp,
    'verp-x': verpAddress({ emailId, returnPath, key }),
    'verp-forged': verp.replace(/\.[a-z2-7]{10}@/, '.aaaaaaaaaa@'),
  };
}

/** The relay's AUTH placeholders for an API key: valid PLAIN and LOGIN blobs, and garbage ones. */
export function relayAuthVars(apiKey: string): Record<string, string> {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return {
    plain: b64(`\0postline\0${apiKey}`),
    'plain-resend': b64(`\0RESEND\0${apiKey}`),
    'login-user': b64('postline'),
    'login-key': b64(apiKey),
    'plain-admin': b64(`\0admin\0${apiKey}`),
    'plain-wrong': b64('\0postline\0pl_not_a_real_key_0000000000'),
    'plain-long': b64(`\0postline\0${'k'.repeat(300)}`),
    'plain-nul': b64(`\0postline\0${apiKey}\0x`),
  };
}
