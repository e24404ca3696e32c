// One jest run for the whole workspace. TypeScript is stripped by swc and kept as ES modules, the same
// module system the services run under (Node 24 type stripping); jest runs with --experimental-vm-modules.
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2023', keepClassNames: true },
    module: { type: 'es6' },
  },
];

const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  testEnvironment: 'node',
};

export default {
  ...common,
  // Jest 30 reads testTimeout only at the top level, not per project.
  testTimeout: 60000,
  // Two workers on the 2-core machine (jest's default there is one): most files spend their time waiting on
  // the services, so two files side by side use the cores the one left idle. A file that kills or restarts
  // services keeps a private system; the others share the run's systems (libs/testing/src/shared-system.ts),
  // so at most two private systems and the shared ones run at once, within Postgres's 100 connections and
  // RabbitMQ's ~927 file handles.
  maxWorkers: 2,
  // The heaviest files spread through the run rather than side by side at its start (jest.sequencer.js).
  testSequencer: '<rootDir>/jest.sequencer.js',
  globalSetup: '<rootDir>/libs/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/global-teardown.ts',
  projects: [
    {
      ...common,
      displayName: 'unit',
      // tests/lint holds the lint rules' own tests: pure, like the unit tests beside the code; so are the
      // dashboard's tests of its pure modules (its pages are tested in Chromium, under tests/dashboard).
      testMatch: [
        '<rootDir>/{libs,services}/*/src/**/*.test.ts',
        '<rootDir>/web/*/src/**/*.test.ts',
        '<rootDir>/tests/lint/**/*.test.ts',
      ],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services}/*/test/**/*.int.test.ts', '<rootDir>/tests/**/*.test.ts'],
      testPathIgnorePatterns: ['/tests/perf/', '/tests/lint/'],
      // Fails a file whose answers broke the OpenAPI document, even where its client swallowed the failure.
      setupFilesAfterEnv: ['<rootDir>/libs/testing/src/api-validation-setup.ts'],
    },
  ],
};
