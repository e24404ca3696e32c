// Tracking links over HTTPS, end to end: Caddy (CADDY_PATH, which npm test sets: Debian's package) runs the committed deploy/Caddyfile
// in front of a test system's gateway, with Caddy's internal CA instead of Let's Encrypt and free ports. A
// domain's verified tracking host gets a certificate at its first handshake and its tracked link redirects over
// HTTPS; a host the gateway does not allow gets no certificate and no TLS session. The gateway's ask answers
// only for verified tracking hosts, never a 500 for junk, and is rate-limited; Caddy keeps it from the public.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  freePort,
  mimePartOf,
  nextSecond,
  testResend,
  uniqueDomain,
  useSystem,
  waitFor,
  type SharedSystem,
} from '@postline/testing';
import { repoRoot } from './manifests.ts';

jest.setTimeout(120_000);

const CADDY = process.env.CADDY_PATH ?? 'caddy';
const TRACKING_HOST = 'track.postline.test';
const ORIGINAL = 'https://shop.example.com/offer?a=1&b=2';

const world = useSystem({ rcptDomain: uniqueDomain('rcpt') });

let system: SharedSystem;
let resend: Resend;
let host: string;
let trackedLink: string;
let caddy: ChildProcess | undefined;
let caddyLog = '';
let home: string;
let httpsPort: number;
let rootCa: string;

beforeAll(async () => {
  system = world.system;
  const team = await system.admin('team', 'create', '--name', 'Tracking over HTTPS');
  resend = testResend(String(team.api_key), system.apiUrl);

  // A verified domain whose tracking host `links.<name>` is a CNAME to ours and verified.
  const domain = await createVerifiedDomain({
    resend,
    dns: world.dns,
    env: system.env,
    name: `${uniqueDomain('tls').split('.')[0]}.example.com`,
  });
  host = `links.${domain.name}`;
  world.dns.set(host, [{ type: 'CNAME', target: TRACKING_HOST }]);
  const updated = await resend.domains.update({ id: domain.id, clickTracking: true, trackingSubdomain: 'links' });
  expect(updated.error).toBeNull();
  await resend.domains.verify(domain.id);
  // The sender's read model follows the domain's state asynchronously; the ask says when it holds it.
  await waitFor(`${host} to be a verified tracking host`, async () => (await ask(host)).status === 200, 60_000);

  // An email with a link: the message the recipient's MX receives carries the tracked link.
  const to = `reader@${world.rcptDomain}`;
  const sent = await resend.emails.send({
    from: `Acme <hello@${domain.name}>`,
    to,
    subject: 'Tracked over HTTPS',
    html: `<html><body><p><a href="${ORIGINAL.replace('&', '&amp;')}">The offer</a></p></body></html>`,
  });
  expect(sent.error).toBeNull();
  await waitFor(`a message to ${to}`, () => world.sink.messages.some((m) => m.to.includes(to)), 30_000);
  const html = mimePartOf(world.sink.messages.find((m) => m.to.includes(to))!.raw, 'text/html') ?? '';
  trackedLink = new RegExp(`https://${host.replaceAll('.', '\\.')}/c/[A-Za-z0-9_-]+`).exec(html)?.[0] ?? '';
  expect(trackedLink).not.toBe('');

  // Caddy, as deploy/Caddyfile says, before this system's gateway; its files in a directory of its own.
  home = mkdtempSync(join(tmpdir(), 'postline-caddy-'));
  httpsPort = await freePort();
  caddy = spawn(CADDY, ['run', '--config', join(repoRoot, 'deploy/Caddyfile'), '--adapter', 'caddyfile'], {
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_DATA_HOME: join(home, 'data'),
      XDG_CONFIG_HOME: join(home, 'config'),
      POSTLINE_GATEWAY: new URL(system.apiUrl).host,
      CADDY_HTTP_PORT: String(await freePort()),
      CADDY_HTTPS_PORT: String(httpsPort),
      CADDY_CERT_ISSUER: 'internal',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Caddy logs to stderr; kept for a failure's message, never printed otherwise.
  caddy.stdout?.on('data', (d: Buffer) => (caddyLog += d.toString()));
  caddy.stderr?.on('data', (d: Buffer) => (caddyLog += d.toString()));
  const rootPath = join(home, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
  try {
    await waitFor('Caddy to make its CA and listen', async () => existsSync(rootPath) && (await listening()), 30_000);
  } catch (err) {
    throw new Error(`${(err as Error).message}; Caddy said:\n${caddyLog.slice(-3000)}`);
  }
  rootCa = readFileSync(rootPath, 'utf8');
}, 180_000);

afterAll(async () => {
  if (caddy && caddy.exitCode === null) {
    const exited = new Promise((resolve) => caddy?.once('exit', resolve));
    caddy.kill('SIGTERM');
    await exited;
  }
  if (home) rmSync(home, { recursive: true, force: true });
}, 30_000);

/** The gateway's ask, as Caddy makes it. */
async function ask(domain: string | string[] | undefined): Promise<Response> {
  const url = new URL('/internal/tls-ask', system.apiUrl);
  for (const d of [domain ?? []].flat()) url.searchParams.append('domain', d);
  return fetch(url);
}

/** Whether Caddy accepts TCP connections on its HTTPS port (no handshake: that would ask the gateway). */
async function listening(): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: httpsPort });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

type HttpsAnswer = { status: number; headers: Record<string, unknown>; body: string; altNames: string };

/** GET `path` over HTTPS on Caddy's port with SNI and Host `servername`, trusting only Caddy's root CA. */
function httpsGet(servername: string, path: string): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: httpsPort, servername, path, headers: { host: servername }, ca: rootCa, agent: false },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            altNames: (res.socket as TLSSocket).getPeerCertificate().subjectaltname ?? '',
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const certificateStored = (name: string) => existsSync(join(home, 'data', 'caddy', 'certificates', 'local', name));

describe('tracking links over HTTPS behind Caddy', () => {
  it('gives a verified tracking host a certificate for its name, and its tracked link redirects to the original URL', async () => {
    const url = new URL(trackedLink);
    const answer = await httpsGet(host, url.pathname);
    expect(answer.altNames).toBe(`DNS:${host}`);
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe(ORIGINAL);
    expect(certificateStored(host)).toBe(true);
  });

  it('gives a host that is not a verified tracking host no certificate and no TLS session', async () => {
    const unknown = `links.${uniqueDomain('nobody')}`;
    await expect(httpsGet(unknown, '/c/whatever')).rejects.toThrow(/alert|socket|ECONNRESET/i);
    expect(certificateStored(unknown)).toBe(false);
  });

  it('keeps the ask from the public: through Caddy /internal/ answers 404', async () => {
    const answer = await httpsGet(host, `/internal/tls-ask?domain=${host}`);
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({ statusCode: 404, name: 'not_found', message: 'Not found' });
  });
});

describe('the gateway’s TLS ask', () => {
  it('answers 200 for a verified tracking host in any case and with the root dot, 404 for any other host', async () => {
    // Six asks, in a window of the rate limit of their own.
    await nextSecond();
    for (const name of [host.toUpperCase(), `${host}.`]) {
      const answer = await ask(name);
      expect([name, answer.status, await answer.json()]).toEqual([name, 200, { domain: host }]);
    }
    // The domain itself, its other names, and names that merely end like it are no tracking hosts.
    const domain = host.slice('links.'.length);
    for (const name of [domain, `x${host}`, `a.${host}`, TRACKING_HOST]) {
      const answer = await ask(name);
      expect([name, answer.status]).toEqual([name, 404]);
      expect(await answer.json()).toMatchObject({ statusCode: 404, name: 'not_found' });
    }
  });

  it('refuses what is not one host name with 422, never a 500', async () => {
    const junk = [
      undefined,
      '',
      '127.0.0.1',
      '[::1]',
      'localhost',
      'a..b',
      `${host}:443`,
      'x'.repeat(300),
      [host, host],
    ];
    for (const value of junk) {
      const answer = await ask(value);
      expect([value, answer.status]).toEqual([value, 422]);
      expect(await answer.json()).toMatchObject({ statusCode: 422, name: 'validation_error' });
    }
  });

  it('takes PUBLIC_LINK_RATE_LIMIT_PER_SECOND asks a second in all, then 429', async () => {
    const perSecond = Number(system.env.PUBLIC_LINK_RATE_LIMIT_PER_SECOND);
    await nextSecond();
    const answers = await Promise.all(
      Array.from({ length: perSecond * 6 }, (_, i) => ask(`h${i}.${uniqueDomain('burst')}`)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 404 || s === 429)).toBe(true);
    const refused = answers.find((a) => a.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ statusCode: 429, name: 'rate_limit_exceeded' });
  });
});
