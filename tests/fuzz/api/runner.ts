// Running the API fuzzer: sending requests, the properties every answer keeps, and the check afterwards that
// every list still reads item by item.
import fc from 'fast-check';
import { request, Agent } from 'undici';
import { checkApiAnswer } from '@postline/testing';
import { fuzzRequest, type FuzzContext, type FuzzRequest } from './request-generators.ts';

const agent = new Agent({ connections: 16, keepAliveTimeout: 10_000 });

/** An answer, and why it breaks the OpenAPI document (its status undocumented, its body not the schema). */
export type FuzzAnswer = { status: number; body: string; documentProblem?: string | undefined };

export async function send(apiUrl: string, req: FuzzRequest): Promise<FuzzAnswer> {
  const url = `${apiUrl}${req.path}`;
  const res = await request(url, {
    method: req.method as 'GET',
    headers: req.headers,
    body: req.body,
    dispatcher: agent,
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
  });
  const body = await res.body.text();
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const one of Array.isArray(value) ? value : [value ?? '']) headers.append(name, one);
  }
  // Checked as every fetch to a test system is (validateApiResponses), from what undici received.
  const bodyless = res.statusCode === 204 || res.statusCode === 304;
  const answer = new Response(bodyless ? null : body, { status: res.statusCode, headers });
  return { status: res.statusCode, body, documentProblem: await checkApiAnswer(req.method, url, answer) };
}

/** Why an answer breaks the properties, or undefined when it keeps them. */
export function problemOf(req: FuzzRequest, answer: FuzzAnswer): string | undefined {
  if (answer.documentProblem) return answer.documentProblem;
  if (answer.status >= 500) return `${answer.status}: ${answer.body.slice(0, 300)}`;
  if (answer.status < 400 || req.method === 'HEAD') return undefined;
  // A public link's 404 and every API error are JSON errors; nothing answers an HTML page or a bare text.
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return `${answer.status} is not JSON: ${answer.body.slice(0, 200)}`;
  }
  const error = parsed as { statusCode?: unknown; name?: unknown; message?: unknown };
  if (error.statusCode !== answer.status) return `statusCode ${String(error.statusCode)} in a ${answer.status}`;
  if (typeof error.name !== 'string' || !/^[a-z_]+$/.test(error.name)) return `bad error name ${String(error.name)}`;
  if (typeof error.message !== 'string' || error.message.length === 0) return 'error without a message';
  return undefined;
}

/**
 * Runs `runs` random requests (fast-check shrinks a failure to the smallest request that still breaks), in
 * `lanes` independent runs side by side (each its share of `runs`; with `seed`, lane i from seed + i), so
 * that the services answer several at a time as they would in use.
 */
export async function fuzzApi(
  ctx: FuzzContext,
  runs: number,
  opts: { seed?: number; lanes?: number } = {},
): Promise<{ statuses: Map<number, number> }> {
  const statuses = new Map<number, number>();
  const lanes = Math.max(1, Math.min(opts.lanes ?? 1, runs));
  const results = await Promise.allSettled(
    Array.from({ length: lanes }, (_, lane) =>
      fc.assert(
        fc.asyncProperty(fuzzRequest(ctx), async (req) => {
          const answer = await send(ctx.apiUrl, req);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          const problem = problemOf(req, answer);
          if (problem) throw new Error(`${req.method} ${req.path} → ${problem}`);
        }),
        {
          numRuns: Math.floor(runs / lanes) + (lane < runs % lanes ? 1 : 0),
          ...(opts.seed === undefined ? {} : { seed: opts.seed + lane }),
          endOnFailure: false,
        },
      ),
    ),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return { statuses };
}

/** Every list route of the team, read to its end with each item fetched by id: no row left half-written. */
export const LIST_ROUTES = [
  '/emails',
  '/domains',
  '/webhooks',
  '/contacts',
  '/segments',
  '/topics',
  '/broadcasts',
  '/templates',
  '/contact-properties',
  '/logs',
];

export async function checkListsReadable(ctx: FuzzContext): Promise<string[]> {
  const problems: string[] = [];
  const headers = { authorization: `Bearer ${ctx.apiKey}` };
  for (const route of LIST_ROUTES) {
    let after: string | undefined;
    for (let page = 0; page < 50; page++) {
      const list = await send(ctx.apiUrl, {
        method: 'GET',
        path: `${route}?limit=100${after ? `&after=${after}` : ''}`,
        headers,
        body: undefined,
      });
      if (list.status !== 200) {
        problems.push(`GET ${route} → ${list.status} ${list.body.slice(0, 200)}`);
        break;
      }
      const parsed = JSON.parse(list.body) as { data: { id?: string }[]; has_more?: boolean };
      for (const item of parsed.data) {
        if (!item.id) continue;
        const one = await send(ctx.apiUrl, { method: 'GET', path: `${route}/${item.id}`, headers, body: undefined });
        if (one.status !== 200) problems.push(`GET ${route}/${item.id} → ${one.status} ${one.body.slice(0, 200)}`);
      }
      if (!parsed.has_more || parsed.data.length === 0) break;
      after = parsed.data.at(-1)?.id;
    }
  }
  return problems;
}
