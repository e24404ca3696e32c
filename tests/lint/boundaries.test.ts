// The import boundaries in eslint.config.js, which `npm run lint` (and so `npm test`) enforces: the sender's
// module rules and every service's layer rules. These tests lint fake imports at real paths with the
// repository's own configuration, so that a rule that stops firing fails here.
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

const root = fileURLToPath(new URL('../../', import.meta.url));
const configUrl = new URL('eslint.config.js', `file://${root}`).href;
type SenderConfig = { default: object[]; SENDER_MODULE_GRAPH: Record<string, string[]> };
const config = (await import(configUrl)) as SenderConfig;

// The whole configuration, without type information (no TypeScript program for a file that does not exist).
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  overrideConfig: [...config.default, tseslint.configs.disableTypeChecked],
});

/** The messages of no-restricted-imports for `code` written at `path` (from the repository's root). */
async function crossingsAt(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath: `${root}${path}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

/** The same for a path under services/sender/src. */
const crossings = (file: string, code: string) => crossingsAt(`services/sender/src/${file}`, code);

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

describe('every service’s layers', () => {
  it.each([
    ['services/api-gateway/src/domain/fake.ts', "import { findApiKey } from '../db/api-keys.ts';"],
    ['services/webhook-dispatcher/src/domain/fake.ts', "import { post } from '../webhook-http/client.ts';"],
    ['services/inbound-smtp/src/domain/fake.ts', "import { SMTPServer } from 'smtp-server';"],
    ['services/domain-verifier/src/domain/fake.ts', "import { resolveTxt } from '../dns/resolver.ts';"],
    ['services/scheduler/src/domain/fake.ts', "import pg from 'pg';"],
    ['services/scheduler/src/domain/fake.ts', "import { createLogger } from '@postline/platform';"],
    ['services/sender/src/audience/domain/fake.ts', "import { createLogger } from '@postline/platform';"],
  ])(
    'fails %s importing an edge, an adapter, a runtime library or the platform’s runtime entry',
    async (path, code) => {
      expect(await crossingsAt(path, code)).toHaveLength(1);
    },
  );

  it('lets domain/ import the platform’s pure entry, the contracts and its own pure files', async () => {
    const code = [
      "import { isUuid } from '@postline/platform/pure';",
      "import type { EmailSent } from '@postline/contracts';",
      "import { timerDue } from './timer.ts';",
    ].join('\n');
    expect(await crossingsAt('services/scheduler/src/domain/fake.ts', code)).toEqual([]);
    expect(await crossingsAt('services/sender/src/audience/domain/fake.ts', code)).toEqual([]);
  });

  it('lets a use case import the database and the runtime entry', async () => {
    const code = "import { sql } from 'kysely';\nimport { createLogger } from '@postline/platform';";
    expect(await crossingsAt('services/scheduler/src/use-cases/fake.ts', code)).toEqual([]);
  });

  it('fails a lib importing a service', async () => {
    const code = "import { loadConfig } from '../../../services/sender/src/config.ts';";
    expect(await crossingsAt('libs/platform/src/config/fake.ts', code)).toEqual([
      expect.stringContaining('import none of them'),
    ]);
    expect(
      await crossingsAt('libs/testing/src/fake.ts', "import { x } from '../../../services/sender/src/main.ts';"),
    ).toHaveLength(1);
  });
});
