// The dashboard's first load: the JavaScript index.html loads before any page's own chunk (the entry and
// what it preloads) is at most 250 KB gzipped. npm test builds the dashboard before jest starts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { ROOT } from '@postline/testing';

const DIST = join(ROOT, 'web', 'dashboard', 'dist');
const BUDGET_BYTES = 250 * 1024;

describe('the dashboard build', () => {
  it('ships at most 250 KB of gzipped JavaScript on first load, all from its own origin', () => {
    const html = readFileSync(join(DIST, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<(?:script[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="([^"]+)"/g)].map(
      (m) => m[1]!,
    );
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) expect(src).toMatch(/^\/dashboard\/assets\/[\w.-]+\.js$/);
    const gzipped = scripts.reduce(
      (sum, src) => sum + gzipSync(readFileSync(join(DIST, src.replace('/dashboard/', '')))).length,
      0,
    );
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
    // Nothing else a browser would fetch from elsewhere: no stylesheet, font or script on another host.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});
