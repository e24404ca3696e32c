// The resend SDK as the tests use it, and small readers they share: a result's data, a part of a message.
import { Resend } from 'resend';

type LogError = (error: unknown, path: string, status?: number) => void;

/**
 * The official resend SDK on a test system. The SDK prints every error answer (`[Resend API Error]`) before
 * returning it as data; here a 4xx answer, which is what a test provokes and then asserts on (or `dataOf`
 * throws naming it), is returned without the print. Server errors and failed requests are still printed:
 * no test expects those.
 */
export function testResend(apiKey: string | undefined, baseUrl: string): Resend {
  const client = new Resend(apiKey, { baseUrl });
  const internals = client as unknown as { logError: LogError };
  const print = internals.logError.bind(client);
  internals.logError = (error, path, status) => {
    if (status === undefined || status >= 500) print(error, path, status);
  };
  return client;
}

/** The `data` of a resend SDK result, or a thrown error naming the API error. */
export function dataOf<T>(result: { data: T | null; error: unknown }): T {
  if (result.error || result.data === null) throw new Error(JSON.stringify(result.error));
  return result.data;
}

/**
 * Calls `send` again while the answer is an outage (a 503, or a connection the server dropped: the SDK's
 * statusCode null), as a client does with the same Idempotency-Key, so the email is still accepted once. A
 * saturated machine can make the gateway give up waiting while the sender still stores the request.
 */
export async function sendThroughOutage<R extends { error: { statusCode: number | null } | null }>(
  send: () => Promise<R>,
  tries = 5,
): Promise<R> {
  let result = await send();
  for (let retry = 1; retry < tries && result.error && (result.error.statusCode ?? 503) === 503; retry++)
    result = await send();
  return result;
}

/** The decoded body of the message's first part of `type` (quoted-printable, base64 or as it is), or undefined. */
export function mimePartOf(raw: Buffer, type: string): string | undefined {
  const message = raw.toString('latin1');
  const header = new RegExp(
    `(?:^|\\r\\n)Content-Type: ${type.replace('/', '\\/')}[^\\r]*(?:\\r\\n[ \\t][^\\r]*)*((?:\\r\\n[^\\r]+)*)\\r\\n\\r\\n`,
    'i',
  ).exec(message);
  if (!header) return undefined;
  const start = header.index + header[0].length;
  const boundary = message.indexOf('\r\n--', start);
  const body = message.slice(start, boundary < 0 ? message.length : boundary);
  const encoding = /Content-Transfer-Encoding: *([\w-]+)/i.exec(header[0])?.[1]?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = body
      .replace(/=\r\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_all, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return Buffer.from(body, 'latin1').toString('utf8');
}
