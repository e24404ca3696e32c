// The one way the dashboard talks to the gateway: the public API's routes (and /dashboard-api/ for what only
// people do), authenticated by the session cookie. Every change carries the session's CSRF token; the browser
// adds the Origin. An error answer is thrown as an ApiError holding the API's own {statusCode, name, message}.
import type { ErrorBody } from '@postline/contracts';

export class ApiError extends Error {
  readonly statusCode: number;
  /** The API's error name (`validation_error`…), or `network_error` when the server could not be reached. */
  readonly code: string;
  constructor(body: { statusCode: number; name: string; message: string }) {
    super(body.message);
    this.statusCode = body.statusCode;
    this.code = body.name;
  }
}

let csrfToken: string | null = null;

/** Set from the session body when signed in; cleared at sign-out. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export type Query = Record<string, string | number | boolean | null | undefined>;

/** `path?query`, leaving out empty values. */
export function withQuery(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (csrfToken) headers['x-csrf-token'] = csrfToken;
  // A form (a file upload) goes as multipart/form-data, with the boundary the browser sets; anything else as JSON.
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
    });
  } catch {
    throw new ApiError({ statusCode: 0, name: 'network_error', message: 'The server could not be reached.' });
  }
  const text = await response.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!response.ok) {
    const error = json as Partial<ErrorBody> | null;
    throw new ApiError({
      statusCode: response.status,
      name: error?.name ?? 'application_error',
      message: error?.message ?? `The server answered ${response.status} ${response.statusText}.`,
    });
  }
  return json as T;
}

/** A non-JSON answer of the API (a file), fetched with the session's CSRF header; its error thrown as the API's. */
async function fetchFile(path: string, query: Query): Promise<Response> {
  const headers: Record<string, string> = {};
  if (csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(withQuery(path, query), { headers, credentials: 'same-origin' });
  } catch {
    throw new ApiError({ statusCode: 0, name: 'network_error', message: 'The server could not be reached.' });
  }
  if (!response.ok) {
    const error = (await response.json().catch(() => null)) as Partial<ErrorBody> | null;
    throw new ApiError({
      statusCode: response.status,
      name: error?.name ?? 'application_error',
      message: error?.message ?? `The server answered ${response.status} ${response.statusText}.`,
    });
  }
  return response;
}

/** A text file the API answers (a kept message's raw source). */
export async function getText(path: string): Promise<string> {
  return (await fetchFile(path, {})).text();
}

/**
 * A file the API answers (an export), saved as `filename` by the browser: fetched with the session's CSRF
 * header (a plain link could not carry it), its error thrown as the API's.
 */
export async function download(path: string, query: Query, filename: string): Promise<void> {
  const url = URL.createObjectURL(await (await fetchFile(path, query)).blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  // Attached while clicked, and the file's URL kept a moment: some browsers start the download after click().
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export const get = <T>(path: string, query?: Query) => request<T>('GET', withQuery(path, query));
export const post = <T>(path: string, body?: unknown) => request<T>('POST', path, body ?? {});
export const patch = <T>(path: string, body: unknown) => request<T>('PATCH', path, body);
export const put = <T>(path: string, body: unknown) => request<T>('PUT', path, body);
export const del = <T>(path: string) => request<T>('DELETE', path);
