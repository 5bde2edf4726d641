// One Jest run for the whole monorepo: unit tests beside the code, integration tests against the
// real servers `npm run infra:up` starts, and the end-to-end test that boots every service.
// No test runs on a Node older than the pinned major (.nvmrc, docs/adr/0035).
require('./scripts/lib/node-runtime').check();

const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
    },
    module: { type: 'commonjs' },
  },
];

const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Libraries are tested from source; services under e2e run from their build output.
  moduleNameMapper: {
    '^@kb/observability/(server-timing|telemetry)$': '<rootDir>/libs/observability/src/$1.ts',
    '^@kb/kb-cli/api$': '<rootDir>/apps/kb-cli/src/api.ts',
    '^@kb/parser-service/testing$': '<rootDir>/apps/parser-service/src/testing/word97.ts',
    '^@kb/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
  },
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/'],
};

module.exports = {
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      // test/lint: the layout rules of ADR 13 (max-lines, module boundaries, doc links) fail as they should.
      testMatch: [
        '<rootDir>/{apps,libs,tools}/*/src/**/*.spec.ts',
        '<rootDir>/test/lint/**/*.spec.ts',
      ],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,libs,tools}/*/test/**/*.int-spec.ts'],
      setupFiles: ['<rootDir>/test/support/require-infra.js'],
    },
    { ...common, displayName: 'deploy', testMatch: ['<rootDir>/test/deploy/**/*.deploy-spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      setupFiles: ['<rootDir>/test/support/require-infra.js'],
    },
  ],
};
