// The sender's module rules in eslint.config.js, run by `npm run lint`: these tests lint fake imports at real
// module paths with the repository's own configuration, so that a rule that stops firing fails here.
import { describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

// eslint 9.9 ships no types: the little of its Node API used here.
type LintMessage = { ruleId: string | null; message: string };
type ESLintApi = new (options: object) => {
  lintText(code: string, options: { filePath: string }): Promise<{ messages: LintMessage[] }[]>;
};
const eslintModule: string = 'eslint';
const { ESLint } = (await import(eslintModule)) as { ESLint: ESLintApi };

const root = fileURLToPath(new URL('../../../', import.meta.url));
const configUrl = new URL('eslint.config.js', `file://${root}`).href;
type SenderConfig = { default: object[]; SENDER_MODULE_GRAPH: Record<string, string[]> };
const config = (await import(configUrl)) as SenderConfig;

// The whole configuration, without type information (no TypeScript program for a file that does not exist).
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  overrideConfig: [...config.default, tseslint.configs.disableTypeChecked],
});

/** The messages of no-restricted-imports for `code` written at `file` (a path under services/sender/src). */
async function crossings(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath: `${root}services/sender/src/${file}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('sender module boundaries', () => {
  it('lets a module import another through its index.ts, along the graph', async () => {
    expect(
      await crossings('emails/use-cases/fake.ts', "import { parseMailbox } from '../../message/index.ts';"),
    ).toEqual([]);
    expect(await crossings('delivery/fake.ts', "import { findEmail } from '../emails/index.ts';")).toEqual([]);
  });

  it('fails an import past another module’s index.ts', async () => {
    const messages = await crossings(
      'broadcasts/use-cases/fake.ts',
      "import { findEmail } from '../../emails/db/emails.ts';",
    );
    expect(messages).toEqual([expect.stringContaining('only through its index.ts')]);
    expect(await crossings('main-fake.ts', "import { createMta } from './delivery/smtp/mta.ts';")).toHaveLength(1);
  });

  it('fails an import against the module graph', async () => {
    const messages = await crossings('emails/use-cases/fake.ts', "import { x } from '../../delivery/index.ts';");
    expect(messages).toEqual([expect.stringContaining('does not let emails import')]);
    expect(await crossings('message/domain/fake.ts', "import { x } from '../../audience/index.ts';")).toHaveLength(1);
  });

  it('keeps domain/ pure', async () => {
    expect(await crossings('audience/domain/fake.ts', "import { sql } from 'kysely';")).toHaveLength(1);
    expect(await crossings('audience/domain/fake.ts', "import { Router } from 'express';")).toHaveLength(1);
    expect(await crossings('audience/domain/fake.ts', "import { findContact } from '../db/contacts.ts';")).toHaveLength(
      1,
    );
    expect(
      await crossings('audience/domain/fake.ts', "import type { SenderDb } from '../../db/schema.ts';"),
    ).toHaveLength(1);
    expect(await crossings('audience/use-cases/fake.ts', "import { sql } from 'kysely';")).toEqual([]);
  });

  it('has a module graph without a cycle', () => {
    const graph = config.SENDER_MODULE_GRAPH;
    const done = new Set<string>();
    const visit = (module: string, path: string[]): void => {
      if (path.includes(module)) throw new Error(`cycle: ${[...path, module].join(' → ')}`);
      if (done.has(module)) return;
      for (const next of graph[module] ?? []) visit(next, [...path, module]);
      done.add(module);
    };
    for (const module of Object.keys(graph)) visit(module, []);
    expect(done.size).toBe(Object.keys(graph).length);
  });
});
