import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '.nx/**',
      'coverage/**',
      'libs/contracts/src/generated/**',
      '**/*.generated.ts',
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
