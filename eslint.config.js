// Type-aware lint for the whole workspace.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// ---- Every service's layers, and the libs -------------------------------------------------------------
// A service's domain/ is pure logic: it imports no database, HTTP, broker or protocol library, none of its
// service's edges or adapters, and only the platform's pure entry (`@postline/platform/pure`), so that its
// unit tests load none of express, amqplib or pg. The libs are shared by the services and import none.

/** Folders that are edges or adapters in some service (docs/architecture.md), never imported by domain/. */
const NOT_DOMAIN_FOLDERS = [
  'db',
  'http',
  'use-cases',
  'consumers',
  'jobs',
  'outbox',
  'admin',
  'smtp',
  'mime',
  'redis',
  'owners',
  'webhook-http',
  'dns',
  'crypto',
  'gateway',
  'message-parsing',
  'tls',
];

/** The import patterns every domain/ folder is held to (the sender's modules add their own). */
export const PURE_DOMAIN_PATTERNS = [
  {
    group: ['kysely', 'kysely/*', 'express', 'express/*', 'amqplib', 'amqplib/*', 'pg', 'pg/*', 'ioredis'],
    message: 'domain/ is pure: no database, HTTP or broker library.',
  },
  {
    group: ['smtp-server', 'nodemailer', 'nodemailer/*', 'mailparser', 'undici', 'pino', 'prom-client'],
    message: 'domain/ is pure: protocol clients, servers, logs and metrics belong to edges and adapters.',
  },
  {
    regex: '^@postline/platform$',
    message: "domain/ imports the platform's pure entry, '@postline/platform/pure', not its runtime entry.",
  },
  {
    regex: `^(\\.\\./)+(${NOT_DOMAIN_FOLDERS.join('|')})/`,
    message: 'domain/ is pure: it imports no db/, http/, use cases, edges or adapters.',
  },
];

const layerBoundaries = [
  {
    files: ['services/*/src/domain/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: PURE_DOMAIN_PATTERNS }] },
  },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '(^|/)services/', message: 'The libs are shared by the services and import none of them.' },
          ],
        },
      ],
    },
  },
];
// ---- end of every service's layers ----------------------------------------------------------------------

// ---- The sender's modules ------------------------------------------------------------------------------
// services/sender/src/<module>/ is one feature laid out like a small service. Another module is entered only
// through its index.ts, and only along this graph: each module with the modules it may import. It is
// acyclic (tests/lint/boundaries.test.ts checks it, and that a crossing fails the lint); to add an edge, add
// it here. A module's domain/ is pure: no db/, http/, use cases, edges or adapters, no kysely, express or
// amqplib.

/** Each sender module and the modules it may import (through their index.ts). */
export const SENDER_MODULE_GRAPH = {
  message: [],
  'sending-domains': [],
  suppressions: ['message'],
  templates: ['message'],
  audience: ['message'],
  emails: ['message', 'sending-domains', 'templates', 'audience'],
  engagement: ['message', 'templates', 'audience', 'emails'],
  broadcasts: ['message', 'sending-domains', 'templates', 'audience', 'emails', 'engagement'],
  delivery: ['message', 'suppressions', 'emails', 'engagement'],
  'dev-inbox': ['delivery'],
  deliverability: ['delivery'],
};

function senderModuleBoundaries() {
  const modules = Object.keys(SENDER_MODULE_GRAPH);
  const src = 'services/sender/src';
  // From inside a module another module is `../<module>/` or `../../<module>/` (deeper: more `../`); from the
  // service root it is also `./<module>/`.
  const throughIndexOnly = {
    regex: `^(\\./|(\\.\\./)+)(${modules.join('|')})/(?!index\\.ts$)`,
    message: 'Another sender module is entered only through its index.ts.',
  };
  const notOnGraph = (module) => {
    const barred = modules.filter((other) => other !== module && !SENDER_MODULE_GRAPH[module].includes(other));
    return barred.length === 0
      ? []
      : [
          {
            regex: `^(\\.\\./)+(${barred.join('|')})/`,
            message: `The sender module graph (SENDER_MODULE_GRAPH in eslint.config.js) does not let ${module} import this module.`,
          },
        ];
  };
  const pureDomain = PURE_DOMAIN_PATTERNS;
  return [
    {
      files: [`${src}/*.ts`, `${src}/http/**/*.ts`, `${src}/db/**/*.ts`],
      rules: { 'no-restricted-imports': ['error', { patterns: [throughIndexOnly] }] },
    },
    ...modules.flatMap((module) => [
      {
        files: [`${src}/${module}/**/*.ts`],
        rules: { 'no-restricted-imports': ['error', { patterns: [throughIndexOnly, ...notOnGraph(module)] }] },
      },
      {
        // Repeats the module's patterns: a later block's options replace an earlier block's for one rule.
        files: [`${src}/${module}/domain/**/*.ts`],
        rules: {
          'no-restricted-imports': ['error', { patterns: [throughIndexOnly, ...notOnGraph(module), ...pureDomain] }],
        },
      },
    ]),
  ];
}
// ---- end of the sender's modules ----------------------------------------------------------------------

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '.runtime/**',
      'coverage/**',
      'web/*/dist/**',
      '.local/**',
      'scripts/bootstrap.mjs',
      'eslint.config.js',
      'jest.config.js',
      'jest.sequencer.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  ...layerBoundaries,
  ...senderModuleBoundaries(),
);
