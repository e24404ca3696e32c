// The MX's two readers of a received message: the MIME parser (mailparser) and the authentication checks
// (mailauth: SPF for the connecting address and MAIL FROM, DKIM, DMARC), each turned into plain values.
import { promises as dns } from 'node:dns';
import type { AddressObject, EmailAddress } from 'mailparser';
import { loadOnFirstUse } from '@postline/platform/pure';
import { AUTHENTICATION_FAILED, dkimVerdict, verdictOf, type AuthVerdicts } from '../domain/authentication-verdicts.ts';
import {
  bestEffortMessage,
  type ParsedAddress,
  type ParsedMessage,
  type SessionFacts,
} from '../domain/received-message.ts';

// Both are loaded with the first message (together about 15 MB of heap, with mailauth's certificate and
// XML parsers): an MX that receives nothing holds neither.
const mailparser = loadOnFirstUse(() => import('mailparser'));
const mailauth = loadOnFirstUse(() => import('mailauth'));

/**
 * A message as mailparser reads it, with the html's `cid:` references kept (the API inlines them on
 * demand). A message it cannot parse is read best-effort (its header block) and carries the error.
 */
export async function parseMessage(raw: Buffer): Promise<ParsedMessage> {
  const { simpleParser } = await mailparser();
  try {
    const mail = await simpleParser(raw, {
      keepCidLinks: true,
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipImageLinks: true,
      skipTextLinks: true,
    });
    return {
      headerLines: [...mail.headerLines],
      from: addresses(mail.from),
      to: addresses(mail.to),
      cc: addresses(mail.cc),
      bcc: addresses(mail.bcc),
      replyTo: addresses(mail.replyTo),
      subject: mail.subject ?? '',
      messageId: mail.messageId ?? null,
      // No html part: `false` as the types say, or absent as simpleParser leaves it with keepCidLinks.
      html: typeof mail.html === 'string' ? mail.html : null,
      text: mail.text ?? null,
      attachments: mail.attachments.map((attachment) => ({
        filename: attachment.filename ?? null,
        contentType: attachment.contentType || 'application/octet-stream',
        contentDisposition: attachment.contentDisposition || null,
        contentId: attachment.cid ? attachment.cid.replace(/^<|>$/g, '') : null,
        content: attachment.content,
      })),
      error: null,
    };
  } catch (err) {
    return bestEffortMessage(raw, err instanceof Error ? err.message : String(err));
  }
}

function addresses(header: AddressObject | AddressObject[] | undefined): ParsedAddress[] {
  const flat = (list: EmailAddress[]): ParsedAddress[] =>
    list.flatMap((entry) =>
      entry.group ? flat(entry.group) : entry.address ? [{ address: entry.address, name: entry.name }] : [],
    );
  if (!header) return [];
  return (Array.isArray(header) ? header : [header]).flatMap((object) => flat(object.value));
}

export type Authenticator = (raw: Buffer, session: SessionFacts) => Promise<AuthVerdicts>;

/**
 * SPF, DKIM and DMARC verdicts through the resolvers in DNS_SERVERS (the system's when empty), each lookup
 * bounded by `timeoutMs`. ARC and BIMI are not checked (nothing shows them). A failure of the checks
 * themselves gives processing_failed, never a refused message.
 */
export function createAuthenticator(opts: {
  servers: readonly string[];
  timeoutMs: number;
  mta: string;
}): Authenticator {
  const resolver = new dns.Resolver({ timeout: opts.timeoutMs, tries: 1 });
  if (opts.servers.length > 0) resolver.setServers([...opts.servers]);
  const resolve = createAnswerCache(
    (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[] | string[][]>,
    DNS_ANSWER_TTL_MS,
  );
  return async (raw, session) => {
    const { authenticate } = await mailauth();
    try {
      const result = await authenticate(raw, {
        ip: session.ip,
        helo: session.helo,
        sender: session.mailFrom,
        mta: opts.mta,
        resolver: resolve,
        disableArc: true,
        disableBimi: true,
      });
      return {
        spf: result.spf ? verdictOf(result.spf.status.result) : 'unknown',
        dkim: dkimVerdict((result.dkim.results ?? []).map(signatureResult)),
        dmarc: result.dmarc ? verdictOf(result.dmarc.status.result) : 'unknown',
      };
    } catch {
      return AUTHENTICATION_FAILED;
    }
  };
}

/**
 * A DKIM signature's result keyword. A body that does not match its signature's body hash is a failed
 * signature (RFC 6376 §6.1.3); mailauth's lenient mode reports it `neutral`, so it is read from the hashes.
 */
function signatureResult(signature: {
  status?: { result?: string };
  bodyHash?: string;
  bodyHashExpecting?: string;
}): string | undefined {
  const { bodyHash, bodyHashExpecting } = signature;
  if (bodyHash && bodyHashExpecting && bodyHash !== bodyHashExpecting) return 'fail';
  return signature.status?.result;
}

type Resolve = (name: string, rrtype: string) => Promise<string[] | string[][]>;

/**
 * How long an answer is reused: a burst of mail from one sender asks for the same SPF, DKIM key and DMARC
 * records again and again. Short, so that a changed record shows within seconds (Node's resolver gives no
 * TTL for TXT answers).
 */
const DNS_ANSWER_TTL_MS = 10_000;
/** Questions remembered at most; past it the cache starts over. */
const MAX_DNS_ANSWERS = 10_000;
/** Answers that say the record does not exist: remembered like an answer. Any other error is not. */
const DEFINITIVE = new Set<string>([dns.NODATA, dns.NOTFOUND]);

/** `resolve` through a cache of answers (and of NXDOMAIN/NODATA) for `ttlMs`; concurrent questions share one query. */
function createAnswerCache(resolve: Resolve, ttlMs: number): Resolve {
  const answers = new Map<string, { until: number; answer: Promise<string[] | string[][]> }>();
  return (name, rrtype) => {
    const key = `${rrtype} ${name.toLowerCase()}`;
    const now = Date.now();
    const hit = answers.get(key);
    // A copy for each caller: the checks may sort or edit what they get.
    if (hit && hit.until > now) return hit.answer.then(copyAnswer);
    if (answers.size >= MAX_DNS_ANSWERS) answers.clear();
    const entry = { until: now + ttlMs, answer: resolve(name, rrtype) };
    answers.set(key, entry);
    entry.answer.catch((err: unknown) => {
      if (!DEFINITIVE.has((err as NodeJS.ErrnoException).code ?? '') && answers.get(key) === entry) answers.delete(key);
    });
    return entry.answer.then(copyAnswer);
  };
}

function copyAnswer(answer: string[] | string[][]): string[] | string[][] {
  return answer.map((record: unknown) =>
    Array.isArray(record)
      ? [...(record as string[])]
      : typeof record === 'object' && record !== null
        ? { ...record }
        : record,
  ) as string[] | string[][];
}
