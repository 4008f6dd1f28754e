/**
 * Migrations safe on a large live database (issue 20): every migration from
 * SAFE_MIGRATIONS_SINCE on is checked statement by statement —
 *   - a new (or dropped) index is built CONCURRENTLY, alone in its migration (CONCURRENTLY
 *     cannot run in a transaction block, and a migration's statements run as one);
 *   - a foreign key or check constraint is added NOT VALID and validated in a later migration
 *     (VALIDATE takes a lock that lets reads and writes go on);
 *   - no UPDATE or DELETE: backfills run in batches outside the migration (a job or command);
 *   - no column type change or SET NOT NULL (a rewrite or a full scan under an exclusive lock);
 *   - a migration that takes a table lock sets lock_timeout first, so it fails and is retried
 *     instead of queueing every writer behind it.
 * docs/operations.md ("Deploying a schema change") says how a deploy runs them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = path.resolve(import.meta.dirname, '../../../prisma/migrations');
/** Migrations before this were written for an empty or small database; they are not changed. */
export const SAFE_MIGRATIONS_SINCE = '20261203100000';

/** The statements of a migration script: comments removed, split on `;` outside strings and $$ bodies. */
export function statements(sql: string): string[] {
  const out: string[] = [];
  let current = '';
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i);
    if (rest.startsWith('--')) {
      const nl = rest.indexOf('\n');
      i += nl < 0 ? rest.length : nl;
      continue;
    }
    const dollar = /^\$[A-Za-z_]*\$/.exec(rest);
    if (dollar) {
      const end = rest.indexOf(dollar[0], dollar[0].length);
      const len = end < 0 ? rest.length : end + dollar[0].length;
      current += rest.slice(0, len);
      i += len;
      continue;
    }
    if (rest[0] === "'") {
      const m = /^'(?:[^']|'')*'/.exec(rest)!;
      current += m[0];
      i += m[0].length;
      continue;
    }
    if (rest[0] === ';') {
      if (current.trim()) out.push(current.trim().replace(/\s+/g, ' '));
      current = '';
      i++;
      continue;
    }
    current += rest[0];
    i++;
  }
  if (current.trim()) out.push(current.trim().replace(/\s+/g, ' '));
  return out;
}

/** Problems of one migration (by folder name) given the later migrations' SQL. */
export function unsafe(name: string, sql: string, later: string[]): string[] {
  const problems: string[] = [];
  const stmts = statements(sql);
  const locks = stmts.some((s) => /^(ALTER TABLE|LOCK TABLE|CREATE TRIGGER|DROP TABLE|DROP TRIGGER|ALTER TYPE)\b/i.test(s));
  if (locks && !/^SET lock_timeout\b/i.test(stmts[0] ?? '')) problems.push(`${name}: takes a table lock without SET lock_timeout first`);
  for (const s of stmts) {
    if (/^CREATE (UNIQUE )?INDEX\b/i.test(s) || /^DROP INDEX\b/i.test(s)) {
      if (!/\bCONCURRENTLY\b/i.test(s)) problems.push(`${name}: index not built or dropped CONCURRENTLY: ${s.slice(0, 80)}`);
      else if (stmts.length > 1) problems.push(`${name}: CONCURRENTLY must be the only statement of its migration`);
    }
    const constraint = /\bADD CONSTRAINT "?([\w]+)"? (FOREIGN KEY|CHECK)\b/i.exec(s);
    if (constraint) {
      if (!/\bNOT VALID\b/i.test(s)) problems.push(`${name}: constraint ${constraint[1]} added without NOT VALID`);
      else if (!later.some((l) => new RegExp(`VALIDATE CONSTRAINT "?${constraint[1]}"?`, 'i').test(l)))
        problems.push(`${name}: constraint ${constraint[1]} is never validated in a later migration`);
    }
    if (/^(UPDATE|DELETE FROM)\b/i.test(s)) problems.push(`${name}: a backfill in the migration (${s.slice(0, 40)}…): run it in batches outside`);
    if (/\bALTER COLUMN "?\w+"? (SET DATA )?TYPE\b/i.test(s) || /\bSET NOT NULL\b/i.test(s))
      problems.push(`${name}: rewrites or scans the table under an exclusive lock: ${s.slice(0, 80)}`);
    if (/\bADD COLUMN\b[^,]*\bNOT NULL\b/i.test(s) && !/\bDEFAULT\b/i.test(s)) problems.push(`${name}: NOT NULL column without a default`);
  }
  return problems;
}

describe('migrations are safe on a large live database', () => {
  const all = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const sql = (name: string) => readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');

  it(`every migration since ${SAFE_MIGRATIONS_SINCE} passes the checks`, () => {
    const checked = all.filter((n) => n >= SAFE_MIGRATIONS_SINCE);
    expect(checked.length).toBeGreaterThan(0);
    const problems = checked.flatMap((name) => unsafe(name, sql(name), all.filter((n) => n > name).map(sql)));
    expect(problems).toEqual([]);
  });

  it('the checks catch what locks or rewrites a large table', () => {
    expect(unsafe('m', 'CREATE INDEX "x" ON "jobs"("a");', [])).toEqual([expect.stringMatching(/not built or dropped CONCURRENTLY/)]);
    expect(unsafe('m', 'CREATE INDEX CONCURRENTLY "x" ON "jobs"("a"); CREATE INDEX CONCURRENTLY "y" ON "jobs"("b");', [])).toHaveLength(2);
    expect(unsafe('m', `SET lock_timeout = '5s'; ALTER TABLE "jobs" ADD CONSTRAINT "c" CHECK (a > 0);`, [])).toEqual([
      expect.stringMatching(/without NOT VALID/),
    ]);
    expect(unsafe('m', `SET lock_timeout = '5s'; ALTER TABLE "jobs" ADD CONSTRAINT "c" FOREIGN KEY ("a") REFERENCES "t"("id") NOT VALID;`, [])).toEqual([
      expect.stringMatching(/never validated/),
    ]);
    expect(
      unsafe('m', `SET lock_timeout = '5s'; ALTER TABLE "jobs" ADD CONSTRAINT "c" CHECK (a > 0) NOT VALID;`, [
        `SET lock_timeout = '5s'; ALTER TABLE "jobs" VALIDATE CONSTRAINT "c";`,
      ]),
    ).toEqual([]);
    expect(unsafe('m', `UPDATE "jobs" SET a = 1;`, [])).toEqual([expect.stringMatching(/backfill/)]);
    expect(unsafe('m', `ALTER TABLE "jobs" ALTER COLUMN "a" SET NOT NULL;`, [])).toEqual([
      expect.stringMatching(/lock_timeout/),
      expect.stringMatching(/rewrites or scans/),
    ]);
    expect(unsafe('m', `SET lock_timeout = '5s'; ALTER TABLE "jobs" ADD COLUMN "b" INTEGER NOT NULL;`, [])).toEqual([
      expect.stringMatching(/without a default/),
    ]);
    // Semicolons inside a function body or a string do not split statements.
    expect(statements(`CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ select 1; select 2 $$; SELECT ';'; -- x; y\nSELECT 3`)).toHaveLength(3);
  });
});
