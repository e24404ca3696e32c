// Every response the tests receive from a test system's API is checked against the OpenAPI document the
// gateway serves: its status must be one the operation documents, and its JSON body must match that
// status's schema. A response shape that drifts from the document fails where it is produced, and, should
// the caller swallow that failure (a client that retries, an SDK that turns it into an error value), the
// test file fails at its end (api-validation-setup.ts).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { OPERATIONS, openApiDocument, type Operation } from '@postline/contracts/openapi';

type Match = { op: Operation; template: RegExp; literal: number };

/** Which responses of a base URL are not checked: those a test's stand-in produced, not Postline. */
export type ValidationOptions = { skip?: (method: string, path: string) => boolean };

const bases = new Map<string, ValidationOptions>();
let installed = false;
let matchers: Match[] | undefined;
let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction | null>();
const problems: string[] = [];

/**
 * Checks every later `fetch` to `apiUrl` (the resend SDK's and the tests' own) against the document; a
 * mismatch is printed, kept (apiResponseProblems) and thrown from that `fetch`. Idempotent per URL; cheap:
 * each schema is compiled once.
 */
export function validateApiResponses(apiUrl: string, options: ValidationOptions = {}): void {
  bases.set(apiUrl.replace(/\/+$/, ''), options);
  if (installed) return;
  installed = true;
  const original = globalThis.fetch;
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await original(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const problem = await checkAnswer(method, url, response);
    if (problem) throw new Error(problem);
    return response;
  };
}

/**
 * Checks one answer a client other than `fetch` received (the fuzzer's undici requests) when its URL is
 * one validateApiResponses watches: the problem (also printed and kept), or undefined.
 */
export async function checkApiAnswer(method: string, url: string, response: Response): Promise<string | undefined> {
  return checkAnswer(method.toUpperCase(), url, response);
}

/** The problems found so far in this test file's answers (every one also failed where it was received). */
export function apiResponseProblems(): readonly string[] {
  return problems;
}

async function checkAnswer(method: string, url: string, response: Response): Promise<string | undefined> {
  const base = [...bases.keys()].find((b) => url.startsWith(`${b}/`) || url === b);
  if (base === undefined) return undefined;
  const path = new URL(url).pathname;
  if (bases.get(base)?.skip?.(method, path)) return undefined;
  const problem = await checkResponse(method, path, response);
  if (problem) {
    console.error(problem);
    problems.push(problem);
  }
  return problem;
}

/** The operation a request reaches, literal segments before parameters (`/emails/batch` before `/emails/{id}`). */
function operationOf(method: string, path: string): Operation | undefined {
  matchers ??= OPERATIONS.map((op) => ({
    op,
    template: new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    literal: op.path.split('/').filter((segment) => segment !== '' && !segment.startsWith('{')).length,
  })).sort((a, b) => b.literal - a.literal);
  return matchers.find((m) => m.op.method.toUpperCase() === method && m.template.test(path))?.op;
}

function validatorOf(op: Operation, status: number): ValidateFunction | null | undefined {
  const key = `${op.method} ${op.path} ${status}`;
  if (compiled.has(key)) return compiled.get(key);
  const operation = openApiDocument().paths[op.path]?.[op.method] as
    | { responses: Record<string, { content?: Record<string, { schema?: object }> }> }
    | undefined;
  const response = operation?.responses[String(status)];
  if (!response) return undefined;
  const schema = response.content?.['application/json']?.schema;
  ajv ??= createAjv();
  const validate = schema ? ajv.compile(schema) : null;
  compiled.set(key, validate);
  return validate;
}

function createAjv(): Ajv2020 {
  const instance = new Ajv2020({ strict: false, allErrors: true });
  instance.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  instance.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));
  instance.addFormat('email', /^[^\s@]+@[^\s@]+$/);
  return instance;
}

async function checkResponse(method: string, path: string, response: Response): Promise<string | undefined> {
  // A followed redirect's answer is the target's, not the API's.
  if (method === 'HEAD' || method === 'OPTIONS' || response.redirected) return undefined;
  const op = operationOf(method, path);
  // A path or method the API does not serve (a test probing 404/405): nothing is documented to hold.
  if (!op) return undefined;
  const where = `${method} ${path} answered ${response.status}`;
  const validate = validatorOf(op, response.status);
  if (validate === undefined) {
    const body = await response.clone().text();
    return `${where}, a status ${op.method.toUpperCase()} ${op.path} does not document (OpenAPI): ${body.slice(0, 300)}`;
  }
  if (validate === null) return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('application/json')) return `${where} with content-type "${type}", not JSON (OpenAPI)`;
  const text = await response.clone().text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${where} with a body that is not JSON (OpenAPI): ${text.slice(0, 300)}`;
  }
  if (validate(body)) return undefined;
  const errors = (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  return `${where}; the body does not match ${op.method.toUpperCase()} ${op.path} in the OpenAPI document: ${errors.join('; ')}\n${text.slice(0, 500)}`;
}

/** Exposed for the validator's own test: the check of one response, as the fetch hook runs it. */
export { checkResponse as checkApiResponse };
