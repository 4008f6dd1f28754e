/**
 * The data-access rule of eslint.config.js (docs/architecture.md "Who reads and writes the
 * database") catches what it is for: a new router or route handler that queries, SQL written
 * outside a package's `src/sql/`, a hand-written transaction, an audit entry written by hand, a
 * month regex of its own. Each case lints a new file's text with the rules the real config gives
 * that path (only those rules: the file does not exist, so the type-aware ones cannot run).
 */
import path from 'node:path';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const RULES = ['no-restricted-syntax', 'no-restricted-imports'] as const;

/** The rule ids `code` breaks when written at `file` (relative to the root). */
async function findings(file: string, code: string): Promise<string[]> {
  const config = (await new ESLint({ cwd: root }).calculateConfigForFile(file)) as Linter.Config;
  const rules = Object.fromEntries(RULES.flatMap((r) => (config.rules?.[r] ? [[r, config.rules[r]]] : [])));
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.{ts,tsx}'], languageOptions: { parser: tseslint.parser }, rules }],
  });
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.map((m) => m.message);
}

const QUERYING_ROUTER = `
import { hrProcedure } from '../trpc.ts';
export const reportRouter = {
  count: hrProcedure.query(async ({ ctx }) => (await ctx.pool.query<{ n: number }>('select count(*)::int as n from employees where company_id = $1', [ctx.companyId])).rows[0]),
};`;

describe('the data-access rule (eslint.config.js)', () => {
  it('fails a new router that queries, and passes one that calls a domain module', async () => {
    const found = await findings('apps/web/src/server/routers/report.ts', QUERYING_ROUTER);
    expect(found.some((m) => m.startsWith('The web app never queries'))).toBe(true);
    expect(found.some((m) => m.startsWith('SQL is written in a `src/sql/` module'))).toBe(true);
    const clean = `
import { listCompanies } from '@beton/dashboard';
import { adminProcedure } from '../trpc.ts';
export const reportRouter = { companies: adminProcedure.query(({ ctx }) => listCompanies(ctx.pool)) };`;
    expect(await findings('apps/web/src/server/routers/report.ts', clean)).toEqual([]);
  });

  it('fails a route handler that takes a connection, imports pg or Prisma, or reads through Prisma raw', async () => {
    const route = `
import pg from 'pg';
import { prismaFor } from '@beton/db/client';
import { db } from '../../../server/db.ts';
export async function GET() {
  const client = await db().connect();
  client.release();
  return Response.json(await prismaFor(db()).$queryRaw\`select 1\`, { headers: { x: String(pg) } });
}`;
    const found = await findings('apps/web/src/app/api/report/route.ts', route);
    expect(found.filter((m) => m.includes("'pg' import is restricted"))).toHaveLength(1);
    expect(found.filter((m) => m.includes("'@beton/db/client' import is restricted"))).toHaveLength(1);
    expect(found.filter((m) => m.startsWith('The web app never takes a connection'))).toHaveLength(1);
    expect(found.filter((m) => m.startsWith('The web app never queries'))).toHaveLength(1);
  });

  it('keeps SQL in src/sql/ modules of the data packages', async () => {
    const read = `export async function count(pool: { query: (s: string) => Promise<unknown> }) { return pool.query(\`select count(*) from month_exports\`); }`;
    expect(await findings('packages/dashboard/src/report.ts', read)).toEqual([expect.stringMatching(/^SQL is written in a `src\/sql\/` module/)]);
    expect(await findings('packages/dashboard/src/sql/report.ts', read)).toEqual([]);
    expect(await findings('packages/people/src/report.ts', read)).toHaveLength(1);
  });

  it('everywhere: transactions through inTransaction, audit through writeAudit, months from @beton/db/month', async () => {
    const code = `
export async function f(c: { query: (s: string, p?: unknown[]) => Promise<unknown> }) {
  await c.query('begin');
  await c.query('insert into audit_log (actor, action, details) values ($1, $2, $3)', ['a', 'b', '{}']);
  await c.query('COMMIT');
}
export const month = /^(\\d{4})-(0[1-9]|1[0-2])$/;`;
    for (const file of ['packages/payroll/src/report.ts', 'apps/worker/src/report.ts', 'packages/dashboard/src/sql/report.ts']) {
      const found = await findings(file, code);
      expect(
        found.filter((m) => m.startsWith('Begin a transaction with inTransaction')),
        file,
      ).toHaveLength(2);
      expect(
        found.filter((m) => m.startsWith('Write the audit log with writeAudit')),
        file,
      ).toHaveLength(1);
      expect(
        found.filter((m) => m.startsWith('A month or a day is checked with @beton/db/month')),
        file,
      ).toHaveLength(1);
    }
    // The helpers themselves are where these are written.
    expect(await findings('packages/db/src/transaction.ts', code)).toEqual([expect.stringMatching(/^A month or a day/)]);
    expect(await findings('packages/db/src/month.ts', code)).toHaveLength(3);
  });
});
