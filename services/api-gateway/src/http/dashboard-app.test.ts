import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { dashboardAppRoutes } from './dashboard-app.ts';

let base: string;
let close: () => void;

beforeAll(async () => {
  const dist = mkdtempSync(join(tmpdir(), 'dashboard-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><title>app</title>');
  const app = express().use(dashboardAppRoutes(dist));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});

afterAll(() => close?.());

const open = (path: string) => fetch(base + path, { redirect: 'manual', headers: { accept: 'text/html' } });

describe('the dashboard app routes', () => {
  it('moves the bare path to /dashboard/, which serves the app (no redirect loop)', async () => {
    const bare = await open('/dashboard');
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/dashboard/']);
    const app = await open('/dashboard/');
    expect(app.status).toBe(200);
    expect(await app.text()).toContain('<title>app</title>');
    expect((await open('/dashboard/team')).status).toBe(200);
  });
});
