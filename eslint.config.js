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
    files: ['apps/*/{src,test}/**/*.{ts,tsx}', 'packages/*/{src,test,bench}/**/*.{ts,tsx}', 'scripts/**/*.ts', 'tooling/**/*.ts', 'deploy/**/*.ts'],
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
    // The seams between the engine and the jobs (definitions, handlers, the registry, enqueues,
    // the worker, schedules) keep their types end to end: a job's name and payload are checked
    // by the compiler from its definition, never silenced by a cast. A name known only at run
    // time goes through `enqueueByName`, checked by the registry and the schema then.
    files: [
      'packages/jobs/src/**/*.ts',
      'packages/*/src/jobs/**/*.ts',
      'packages/dashboard/src/job-registry.ts',
      'packages/dashboard/src/admin/**/*.ts',
      'apps/worker/src/**/*.ts',
      'scripts/bench*.ts',
    ],
    // graphile-pool.ts stands in for a pg.Pool (a database seam, not a job's).
    ignores: ['packages/jobs/src/engine/graphile-pool.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'TSAsExpression[typeAnnotation.type="TSNeverKeyword"]',
          message: '`as never` on a job seam: type the call from the definition (or enqueueByName).',
        },
        {
          selector: 'TSAsExpression > TSAsExpression[typeAnnotation.type="TSUnknownKeyword"]',
          message: "`as unknown as` on a job seam: keep the definitions' types (configureDefinitions keeps them).",
        },
      ],
    },
  },
  {
    // Tests read JSON bodies and database rows as they come (`any` from res.json() / pg) and pass
    // async fakes where the engine expects async functions; the source keeps the strict rules.
    files: ['apps/*/test/**/*.{ts,tsx}', 'packages/*/{test,bench}/**/*.{ts,tsx}', 'scripts/**/*.ts', 'tooling/**/*.ts', 'deploy/**/*.ts'],
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
