import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

/** The packages of the transports (gRPC, REST, Kafka, MCP): domain code never imports them. */
const TRANSPORT_PACKAGES = [
  '@grpc/*',
  '@nestjs/microservices',
  '@nestjs/platform-express',
  'kafkajs',
  'express',
  'multer',
  '@modelcontextprotocol/*',
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '.nx/**',
      'coverage/**',
      'libs/contracts/src/generated/**',
      '**/*.generated.ts',
      'libs/api-client/src/generated/**',
      'helm/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx, 'simple-import-sort': simpleImportSort },
    languageOptions: {
      // One program over every source and test file (tsconfig.spec.json), for the type-aware rules.
      parserOptions: { project: './tsconfig.spec.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Imports and exports in one order everywhere (packages, then relative), fixed by --fix.
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Apps never import apps; libraries never import apps. What services share lives in libs/.
      '@nx/enforce-module-boundaries': [
        'error',
        {
          // The fakes in libs/testing run the conformance suites of the real adapters, which
          // live beside those adapters' integration tests (libs/<lib>/test/support/).
          allow: ['^(\\.\\./)+[a-z-]+/test/support/conformance$'],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            // tools/ (kb-tools: benches, evals) call the APIs through the kb CLI's clients.
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:lib', 'type:app'] },
            // Domain code (the shared event and error model) never depends on a transport.
            { sourceTag: 'layer:domain', notDependOnLibsWithTags: ['layer:transport'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Files stay short (ADR 13): split by use case before a file passes 350 lines. Every line
    // counts, blank and comment lines too. Generated code is ignored above; tests are exempt.
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts', 'tools/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', '**/test/**'],
    rules: { 'max-lines': ['error', { max: 350, skipBlankLines: false, skipComments: false }] },
  },
  {
    // Domain libraries (tagged layer:domain) never import a transport's packages. Their specs
    // may: they check how the domain reads a transport's errors (libs/errors/src/error-class.spec.ts).
    files: ['libs/contracts/src/**/*.ts', 'libs/errors/src/**/*.ts', 'libs/pii/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: TRANSPORT_PACKAGES,
              message:
                'Domain code never imports a transport (ADR 13); map to it in libs/grpc, libs/http, libs/kafka or libs/mcp.',
            },
          ],
        },
      ],
    },
  },
  {
    // In a service, a transport's packages are for its transport adapters and its wiring only;
    // the domain code (services, repositories, rules) reaches them through libs/ ports.
    files: ['apps/*-service/src/**/*.ts'],
    ignores: [
      '**/*.spec.ts',
      '**/main.ts',
      '**/app.module.ts',
      '**/platform/**',
      '**/*.controller.ts',
      '**/*.grpc.ts',
      '**/*.consumer.ts',
      '**/*.filter.ts',
      '**/*.options.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: TRANSPORT_PACKAGES,
              message:
                'Only transport adapters (*.controller.ts, *.grpc.ts, *.consumer.ts, *.filter.ts), main.ts, app.module.ts and platform/ import a transport (ADR 13).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
        fetch: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
