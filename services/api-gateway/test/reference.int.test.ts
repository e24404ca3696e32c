// The OpenAPI document and its reference page as a running system's gateway serves them, without an API
// key: the JSON and YAML forms are the document the contracts build, and the page, in a real browser
// (Debian's Chromium, driven by playwright-core), lists every family, shows an operation with its request
// body and its answers, and loads nothing from anywhere but the gateway (installs are often offline).
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { parse } from 'yaml';
import { FAMILIES, OPERATIONS, openApiDocument } from '@postline/contracts/openapi';
import { useSystem, type SharedSystem } from '@postline/testing';

jest.setTimeout(60_000);

let system: SharedSystem;
let browser: Browser;

const world = useSystem();

beforeAll(async () => {
  ({ system } = world);
  // npm test finds or installs a Chromium and names it in CHROMIUM_PATH.
  const executablePath = process.env.CHROMIUM_PATH ?? execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim();
  browser = await chromium.launch({
    executablePath,
    headless: true,
    // Chromium's sandbox cannot run as root (CI containers).
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
}, 30_000);

describe('the OpenAPI document', () => {
  it('is served without a key as JSON, and as YAML with the same content', async () => {
    const json = await fetch(`${system.apiUrl}/openapi.json`);
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    const document = (await json.json()) as ReturnType<typeof openApiDocument>;
    expect(document).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(document.openapi).toBe('3.1.1');
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item));
    expect(operations).toHaveLength(OPERATIONS.length);
    expect(Object.keys(document.webhooks)).toHaveLength(19);

    const yaml = await fetch(`${system.apiUrl}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(parse(await yaml.text())).toEqual(document);
  });
});

describe('the reference page', () => {
  it('lists every family and shows an operation, loading nothing from elsewhere', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const origin = new URL(system.apiUrl).origin;
    page.on('request', (request) => {
      if (new URL(request.url()).origin !== origin) elsewhere.push(request.url());
    });
    try {
      const answer = await page.goto(`${system.apiUrl}/docs`);
      expect(answer?.status()).toBe(200);
      expect(await page.title()).toBe('Postline API reference');

      const sidebar = page.getByRole('complementary', { name: /sidebar/i });
      for (const family of FAMILIES) {
        await expect(sidebar.getByRole('link', { name: family, exact: true }).isVisible()).resolves.toBe(true);
      }
      // The first family is open; every operation of it is listed.
      for (const op of OPERATIONS.filter((o) => o.tag === 'Emails')) {
        await sidebar
          .getByRole('link', { name: new RegExp(`^${escape(op.summary)} HTTP Method: ${op.method}$`, 'i') })
          .waitFor();
      }

      await sidebar.getByRole('button', { name: /Domains/ }).click();
      await sidebar.getByRole('link', { name: /^Create a domain/ }).click();
      const operation = page.getByRole('main').getByRole('region', { name: 'Create a domain' });
      await operation.getByRole('heading', { name: 'Body' }).waitFor();
      await operation.getByText('custom_return_path', { exact: true }).first().waitFor();
      await operation.getByRole('tab', { name: /201/ }).waitFor();
      await expect(operation.getByText(/invalid_region/).count()).resolves.toBeGreaterThan(0);

      expect(elsewhere).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('serves the renderer from the gateway, and a missing asset as a 404', async () => {
    const script = await fetch(`${system.apiUrl}/docs/assets/standalone.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    await script.arrayBuffer();
    const missing = await fetch(`${system.apiUrl}/docs/assets/nothing-here.js`);
    expect(missing.status).toBe(404);
    await missing.arrayBuffer();
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
