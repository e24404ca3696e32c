// The error names the OpenAPI document gives an operation are ones the code can answer: every name some
// operation documents is raised somewhere in the services or the platform they share. (Which operation
// raises which name is held where responses are validated: an answer whose name its operation does not
// document fails there.)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { errorsByStatus, OPERATIONS } from '@postline/contracts/openapi';

const root = new URL('../../', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'));
}

describe('the documented error names', () => {
  it('are each raised by some code', () => {
    const code = [
      'services/api-gateway/src',
      'services/sender/src',
      'services/domain-verifier/src',
      'services/inbound-smtp/src',
      'services/webhook-dispatcher/src',
      'libs/platform/src',
    ]
      .flatMap(sources)
      .join('\n');
    const documented = new Set(OPERATIONS.flatMap((op) => [...errorsByStatus(op).values()].flat()));
    const neverRaised = [...documented].filter((name) => !code.includes(`'${name}'`));
    expect(neverRaised).toEqual([]);
  });
});
