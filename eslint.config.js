// @ts-check
/**
 * Lint: typescript-eslint with type information (each workspace's tsconfig through the project
 * service). Runs inside `npm test` (tooling/lint/lint.test.ts); `npm run lint` runs it alone.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/.next/**', '**/dist/**', 'packages/db/src/generated/**', '**/next-env.d.ts', '.beton/**', 'test-artifacts/**'],
  },
  {
    files: ['apps/*/{src,test}/**/*.{ts,tsx}', 'packages/*/{src,test,bench}/**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_name` marks a value kept on purpose (a destructured field left out, an unused parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Every promise is awaited, returned or explicitly voided (a lost rejection is a lost job).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // The job engine is a library: it knows no application. Its source imports nothing of
    // Beton's (the application hands it a pg pool, an audit port, a logger, a metric prefix).
    files: ['packages/jobs/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@beton/*'], message: 'The job engine imports nothing of the application (docs/engine.md).' }] },
      ],
    },
  },
  {
    // Tests read JSON bodies and database rows as they come (`any` from res.json() / pg) and pass
    // async fakes where the engine expects async functions; the source keeps the strict rules.
    files: ['apps/*/test/**/*.{ts,tsx}', 'packages/*/{test,bench}/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
