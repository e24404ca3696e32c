// The dashboard as a person uses it, in a real browser: Debian's Chromium driven by playwright-core. A page
// opened here records what would make a test fail however it ends: a request to any other host (the
// dashboard loads nothing from elsewhere), an error printed in the console (a CSP violation, an uncaught
// exception), and an API answer that does not match the OpenAPI document.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { checkApiResponse } from './api-validation.ts';
import { ROOT } from './system.ts';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Where the suite writes each page's screenshot (README shows some of them, copied to docs/screenshots). */
export const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR ?? join(ROOT, '.local', 'screenshots');

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export async function launchBrowser(): Promise<Browser> {
  // npm test finds or installs a Chromium and names it in CHROMIUM_PATH.
  const executablePath = process.env.CHROMIUM_PATH ?? execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();
  return chromium.launch({
    executablePath,
    headless: true,
    // Chromium's sandbox cannot run as root (CI containers); the rest keeps it from calling Google's hosts.
    args: [
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export type BrowserSession = {
  context: BrowserContext;
  page: Page;
  /** Requests made to any host but the API's. */
  elsewhere: string[];
  /** Console errors and uncaught exceptions. */
  errors: string[];
  /** API answers that do not match the OpenAPI document. */
  contractProblems: string[];
  /** Every problem above, for one assertion at the end of a flow. */
  problems: () => string[];
  close: () => Promise<void>;
};

/**
 * A fresh browser context (its own cookies) on the API's origin, with one page. `expectedErrors` are console
 * messages a flow provokes on purpose (the browser logs every 4xx answer as a failed resource load).
 */
export async function openBrowserSession(
  browser: Browser,
  apiUrl: string,
  opts: { viewport?: { width: number; height: number } } = {},
): Promise<BrowserSession> {
  const origin = new URL(apiUrl).origin;
  const context = await browser.newContext({ baseURL: origin, viewport: opts.viewport ?? LAPTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await context.newPage();
  const elsewhere: string[] = [];
  const errors: string[] = [];
  const contractProblems: string[] = [];
  const checks: Promise<void>[] = [];
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && new URL(url).origin !== origin) elsewhere.push(url);
  });
  context.on('console', (message) => {
    // A refused API call is the page's business (it shows the message); the browser still logs it.
    if (message.type() === 'error' && !/the server responded with a status of [45]\d\d/.test(message.text())) {
      errors.push(message.text());
    }
  });
  context.on('weberror', (error) => errors.push(error.error().message));
  context.on('response', (response) => {
    const url = new URL(response.url());
    if (url.origin !== origin || url.pathname.startsWith('/dashboard/') || url.pathname === '/dashboard') return;
    checks.push(
      (async () => {
        // A body the browser no longer holds (the page navigated away first) cannot be checked.
        const body = await response.body().catch(() => null);
        if (body === null) return;
        const status = response.status();
        const copy = new Response(status === 204 || status === 304 ? null : new Uint8Array(body), {
          status,
          headers: response.headers(),
        });
        const problem = await checkApiResponse(response.request().method(), url.pathname, copy);
        if (problem) contractProblems.push(problem);
      })(),
    );
  });
  return {
    context,
    page,
    elsewhere,
    errors,
    contractProblems,
    problems: () => [...elsewhere.map((u) => `request elsewhere: ${u}`), ...errors, ...contractProblems],
    close: async () => {
      await Promise.allSettled(checks);
      await context.close();
    },
  };
}

/** The serious and critical accessibility violations axe-core finds on the page as it is now. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, so the page's Content-Security-Policy does not refuse it.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<AxeResults> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      resultTypes: ['violations'],
    });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact}: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  return violations;
}
type AxeResults = {
  violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
};

/** Writes the page's screenshot as `<name>.png` under SCREENSHOT_DIR; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
