// The relay's client of the api-gateway (the relay ⇄ gateway contract): the relay is an API client like
// any other, so the gateway's authentication, rate limit, domain checks, idempotency and request log apply
// to relayed mail exactly as to POST /emails. Kept-alive pooled connections (undici's request), each call
// bounded by a timeout; a failure to get an answer is a value, never a throw.
import { Agent, request } from 'undici';
import { ENVELOPE_FROM_HEADER, ENVELOPE_TO_HEADER, RAW_EMAIL_BODY } from '@postline/contracts';
import type { GatewayAnswer } from '../domain/relay-replies.ts';

/** One message to submit, as the client gave it (its bytes with CRLF line ends) and its envelope. */
export type Submission = {
  apiKey: string;
  raw: Buffer;
  /** MAIL FROM ('' for the null sender). */
  envelopeFrom: string;
  envelopeTo: string[];
  idempotencyKey: string | undefined;
};

export type RelayGateway = {
  /** GET /relay/credentials with the key given at AUTH. */
  checkCredentials: (apiKey: string) => Promise<GatewayAnswer>;
  /** POST /emails with the message as message/rfc822. */
  submit: (submission: Submission) => Promise<GatewayAnswer>;
  /** Closes the pooled connections once the calls in flight are answered. */
  close: () => Promise<void>;
};

export type RelayGatewayOptions = {
  /** API_GATEWAY_URL. */
  baseUrl: string;
  /** The AUTH check's limit: the client waits on it before its 235 or 535. */
  authTimeoutMs?: number;
  /** A submission's limit (up to 40 MB to upload, then the gateway's and the sender's work). */
  submitTimeoutMs?: number;
  /** Connections kept to the gateway at most. */
  connections?: number;
};

const USER_AGENT = 'Postline-SMTP-Relay/1.0';
/** The gateway's answers are small JSON bodies; anything past this is not read. */
const MAX_ANSWER_BYTES = 64 * 1024;

export function createRelayGateway(options: RelayGatewayOptions): RelayGateway {
  const authTimeoutMs = options.authTimeoutMs ?? 10_000;
  const submitTimeoutMs = options.submitTimeoutMs ?? 60_000;
  const agent = new Agent({ connections: options.connections ?? 64, keepAliveTimeout: 30_000 });
  const url = (path: string) => new URL(path, options.baseUrl);

  async function call(
    target: URL,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: Buffer },
    timeoutMs: number,
  ): Promise<GatewayAnswer> {
    try {
      const res = await request(target, {
        ...init,
        dispatcher: agent,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      return { kind: 'answered', status: res.statusCode, body: await readAnswer(res.body) };
    } catch (err) {
      return { kind: 'failed', reason: reasonOf(err) };
    }
  }

  return {
    checkCredentials: (apiKey) =>
      call(
        url('/relay/credentials'),
        { method: 'GET', headers: { authorization: `Bearer ${apiKey}`, 'user-agent': USER_AGENT } },
        authTimeoutMs,
      ),
    submit(submission) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${submission.apiKey}`,
        'content-type': RAW_EMAIL_BODY.type,
        'user-agent': USER_AGENT,
        [ENVELOPE_FROM_HEADER]: submission.envelopeFrom,
        [ENVELOPE_TO_HEADER]: submission.envelopeTo.join(','),
      };
      if (submission.idempotencyKey !== undefined) headers['idempotency-key'] = submission.idempotencyKey;
      return call(url(RAW_EMAIL_BODY.path), { method: 'POST', headers, body: submission.raw }, submitTimeoutMs);
    },
    close: () => agent.close(),
  };
}

/** The answer's body as text, at most MAX_ANSWER_BYTES of it (the rest is dropped). */
async function readAnswer(body: AsyncIterable<Buffer> & { destroy: () => unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes >= MAX_ANSWER_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks, bytes).subarray(0, MAX_ANSWER_BYTES).toString('utf8');
}

/** undici's errors carry a code (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`, ...); a timeout is an abort. */
function reasonOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.name : 'unknown';
}
