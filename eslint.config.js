// @ts-check
/**
 * Lint: typescript-eslint with type information (each workspace's tsconfig through the project
 * service). Runs inside `npm test` (tooling/lint/lint.test.ts); `npm run lint` runs it alone.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * The data-access rule (docs/architecture.md "Who reads and writes the database"), enforced:
 * - the web app (routers, route handlers, pages, its server modules) never queries: no pg, no
 *   Prisma, no SQL text, no `.query(…)` of a database, no `.connect()`: it calls a named module
 *   of a domain package;
 * - in the data packages this rule covers (db, dashboard, people), SQL text is written only in a
 *   `src/sql/` module (typed rows), except in the files listed in SQL_OUTSIDE_SQL_MODULES, which
 *   were written before the rule (the list only shrinks);
 * - everywhere: a transaction is `inTransaction` (no hand-written BEGIN/COMMIT), an audit entry is
 *   `writeAudit` (no `insert into audit_log`), a month is `@beton/db/month` (no month regex).
 */
/** SQL statement text at the start of a string or a template. */
const SQL = String.raw`/^\s*(select\s[\s\S]*\sfrom\s|insert\s+into\s|update\s+"?\w+"?\s+(\w+\s+)?set\s|delete\s+from\s|with\s+\w+\s+as\s*\(|truncate\s)/i`;
const FACTS = {
  transaction: {
    selector: String.raw`CallExpression[callee.property.name='query'][arguments.0.value=/^\s*(begin|commit|rollback|start\s+transaction)\b/i]`,
    message: 'Begin a transaction with inTransaction (@beton/db/transaction), not by hand.',
  },
  audit: {
    selector: String.raw`:matches(Literal[value=/insert\s+into\s+"?audit_log/i], TemplateElement[value.raw=/insert\s+into\s+"?audit_log/i])`,
    message: 'Write the audit log with writeAudit / writeAuditMany (@beton/db/transaction).',
  },
  month: {
    selector: String.raw`Literal[regex.pattern=/0\[1-9\]\|1\[0-2\]/]`,
    message: 'A month or a day is checked with @beton/db/month (MONTH_PATTERN, isCalendarMonth, monthSchema, DAY_PATTERN), not a regex of its own.',
  },
};
const NO_QUERY_IN_WEB = [
  {
    selector: String.raw`CallExpression[callee.property.name='query'][arguments.0.type!=/^(ArrowFunctionExpression|FunctionExpression)$/]`,
    message: 'The web app never queries: call a named module of a domain package (@beton/dashboard, @beton/people, @beton/payroll, @beton/db).',
  },
  {
    selector: String.raw`CallExpression[callee.property.name='connect'][arguments.length=0]`,
    message: 'The web app never takes a connection: a domain module runs the statements (in inTransaction when they belong together).',
  },
  {
    selector: String.raw`MemberExpression[property.name=/^\$(queryRaw|executeRaw|queryRawUnsafe|executeRawUnsafe|transaction)$/]`,
    message: 'The web app never queries: call a named module of a domain package.',
  },
];
const SQL_TEXT = {
  selector: `:matches(Literal[value=${SQL}], TemplateLiteral[quasis.0.value.raw=${SQL}])`,
  message: 'SQL is written in a `src/sql/` module of its package, with its row type (docs/architecture.md "Who reads and writes the database").',
};
/** Files that held SQL text before the rule; each moves its statements into its package's src/sql/ when next reworked. */
const SQL_OUTSIDE_SQL_MODULES = [
  // The one transaction helper and audit writer, and the database package's own bootstrap.
  'packages/db/src/transaction.ts',
  'packages/db/src/pool.ts',
  'packages/db/src/migrate.ts',
  'packages/db/src/bootstrap.ts',
  'packages/db/src/seed.ts',
  'packages/dashboard/src/admin.ts',
  'packages/dashboard/src/employees.ts',
  'packages/dashboard/src/runs.ts',
  'packages/dashboard/src/months.ts',
  'packages/dashboard/src/exports/*.ts',
  'packages/people/src/employees.ts',
  'packages/people/src/salary.ts',
  'packages/people/src/import/run.ts',
  'packages/people/src/import/service.ts',
];
/** Where a fact's own definition lives (it may write what everyone else imports). */
const FACT_SOURCES = {
  transaction: ['packages/db/src/transaction.ts'],
  // The engine's queue resume writes its audit entry in the statement that resumes; the engine takes an audit port instead when it becomes a library.
  audit: ['packages/db/src/transaction.ts', 'packages/jobs/src/engine/pause.ts'],
  // The PDF package depends on nothing: it keeps its own month parser.
  month: ['packages/db/src/month.ts', 'packages/pdf/src/**'],
};
const SRC = ['apps/*/src/**/*.{ts,tsx}', 'packages/*/src/**/*.{ts,tsx}'];
const DATA_PACKAGES = ['packages/db/src/**/*.ts', 'packages/dashboard/src/**/*.ts', 'packages/people/src/**/*.ts'];
/** The FACTS rules that apply to a file that is the source of `except` (all of them when none). */
const facts = (...except) => Object.entries(FACTS).flatMap(([name, rule]) => (except.includes(name) ? [] : [rule]));

/** Casts that would silence a job seam's types (the job-seam rule below). */
const JOB_SEAM_CASTS = [
  {
    selector: 'TSAsExpression[typeAnnotation.type="TSNeverKeyword"]',
    message: '`as never` on a job seam: type the call from the definition (or enqueueByName).',
  },
  {
    selector: 'TSAsExpression > TSAsExpression[typeAnnotation.type="TSUnknownKeyword"]',
    message: "`as unknown as` on a job seam: keep the definitions' types (configureDefinitions keeps them).",
  },
];

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
  { files: SRC, rules: { 'no-restricted-syntax': ['error', ...facts()] } },
  // A fact's source is exempt from that fact's rule only (a file may be the source of several).
  ...[...new Set(Object.values(FACT_SOURCES).flat())].map((file) => ({
    files: [file],
    rules: { 'no-restricted-syntax': ['error', ...facts(...Object.keys(FACT_SOURCES).filter((name) => FACT_SOURCES[name].includes(file)))] },
  })),
  {
    files: DATA_PACKAGES,
    ignores: ['packages/*/src/sql/**', 'packages/db/src/generated/**', ...SQL_OUTSIDE_SQL_MODULES, ...Object.values(FACT_SOURCES).flat()],
    rules: { 'no-restricted-syntax': ['error', ...facts(), SQL_TEXT] },
  },
  {
    files: ['apps/web/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-syntax': ['error', ...facts(), SQL_TEXT, ...NO_QUERY_IN_WEB],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'pg', allowTypeImports: true, message: 'The web app never queries: call a named module of a domain package.' },
            { name: '@prisma/client', message: 'The web app never queries: call a named module of a domain package.' },
            { name: '@beton/db/client', message: 'Prisma Client is for the domain packages: the web app calls their named modules.' },
          ],
          patterns: [{ group: ['**/generated/prisma/**'], message: 'The web app never queries: call a named module of a domain package.' }],
        },
      ],
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
    files: ['packages/*/src/jobs/**/*.ts', 'packages/dashboard/src/job-registry.ts', 'packages/dashboard/src/admin/**/*.ts', 'apps/worker/src/**/*.ts'],
    // graphile-pool.ts stands in for a pg.Pool (a database seam, not a job's).
    ignores: ['packages/jobs/src/engine/graphile-pool.ts'],
    // The source's facts rules stay on (a later no-restricted-syntax replaces an earlier one).
    rules: { 'no-restricted-syntax': ['error', ...facts(), ...JOB_SEAM_CASTS] },
  },
  {
    // The engine (its own transactions and audit port, no @beton/* import) and the benches: the casts only.
    files: ['packages/jobs/src/**/*.ts', 'scripts/bench*.ts'],
    ignores: ['packages/jobs/src/engine/graphile-pool.ts'],
    rules: { 'no-restricted-syntax': ['error', ...JOB_SEAM_CASTS] },
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
