// Prisma CLI through the schema-engine stand-in (tooling/prisma-engine), against PostgreSQL.
// Uses the server of DATABASE_URL when set (the suite's global setup exports one), else
// postgres://postgres@127.0.0.1:5432; creates uniquely named scratch databases and drops them.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const migrationsDir = path.join(root, 'prisma/migrations');
const projectNode = path.join(root, 'node_modules/node/bin/node');
const node = fs.existsSync(projectNode) ? projectNode : process.execPath;
const prismaCli = path.join(root, 'node_modules/prisma/build/index.js');

const serverUrl = process.env.DATABASE_URL || process.env.BETON_TEST_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
const created: string[] = [];

function urlFor(database: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function createDb(tag: string): Promise<string> {
  const name = `beton_pe_${tag}_${suffix}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  created.push(name);
  return urlFor(name);
}

async function query<T = Record<string, unknown>>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

const shadowDbs = () =>
  admin(async (c) => (await c.query(`SELECT datname FROM pg_database WHERE datname LIKE 'prisma_migrate_shadow_db_%'`)).rows.map((r) => r.datname as string));

interface Run {
  code: number;
  out: string;
}

// Runs the Prisma CLI as `npx prisma` would, with the binary host made unreachable so that
// any attempt to download an engine fails instead of passing by accident.
function prisma(args: string[], opts: { url?: string; cwd?: string; input?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      node,
      [prismaCli, ...args],
      {
        cwd: opts.cwd ?? root,
        env: {
          ...process.env,
          ...(opts.url ? { DATABASE_URL: opts.url } : {}),
          PRISMA_ENGINES_MIRROR: 'http://127.0.0.1:9',
          PRISMA_HIDE_UPDATE_MESSAGE: '1',
          CHECKPOINT_DISABLE: '1',
          CI: '1',
        },
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, out: `${stdout}\n${stderr}` });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

const migrationNames = () =>
  fs
    .readdirSync(migrationsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(migrationsDir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort();

let shadowBefore: string[] = [];

beforeAll(async () => {
  shadowBefore = await shadowDbs();
});

afterAll(async () => {
  await admin(async (c) => {
    for (const name of created) await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
  fs.rmSync(path.join(here, '../.tmp', suffix), { recursive: true, force: true });
});

describe('prisma CLI over the WASM schema-engine stand-in', () => {
  it('has committed migrations', () => {
    expect(migrationNames().length).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(migrationsDir, 'migration_lock.toml'), 'utf8')).toContain('postgresql');
  });

  it('migrate deploy applies the committed migrations to an empty database; a second deploy is a no-op', async () => {
    const url = await createDb('deploy');
    const first = await prisma(['migrate', 'deploy'], { url });
    expect(first.out).toContain('All migrations have been successfully applied');
    expect(first.code).toBe(0);

    type Row = { migration_name: string; finished_at: Date | null; rolled_back_at: Date | null; started_at: Date };
    const rows = await query<Row>(url, 'SELECT * FROM _prisma_migrations ORDER BY migration_name');
    expect(rows.map((r) => r.migration_name)).toEqual(migrationNames());
    expect(rows.every((r) => r.finished_at !== null && r.rolled_back_at === null)).toBe(true);
    const tables = await query<{ t: string }>(url, `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'`);
    expect(tables.map((r) => r.t)).toEqual(expect.arrayContaining(['companies', 'employees', 'jobs', 'slips']));

    const second = await prisma(['migrate', 'deploy'], { url });
    expect(second.code).toBe(0);
    expect(second.out).toContain('No pending migrations to apply');
    const again = await query<Row>(url, 'SELECT * FROM _prisma_migrations ORDER BY migration_name');
    expect(again).toEqual(rows);

    const status = await prisma(['migrate', 'status'], { url });
    expect(status.out).toContain('Database schema is up to date');
    expect(status.code).toBe(0);

    // The deployed database matches schema.prisma.
    const live = await prisma(['migrate', 'diff', '--from-config-datasource', '--to-schema', 'prisma/schema.prisma', '--exit-code'], { url });
    expect(live.out).toContain('No difference detected');
    expect(live.code).toBe(0);
  });

  it('the committed migrations match schema.prisma (no drift)', async () => {
    const url = await createDb('diff');
    const diff = await prisma(['migrate', 'diff', '--from-migrations', 'prisma/migrations', '--to-schema', 'prisma/schema.prisma', '--exit-code'], { url });
    expect(diff.out, 'run `npx prisma migrate dev --name <change>` and commit the migration').toContain('No difference detected');
    expect(diff.code).toBe(0);

    // Sanity: --exit-code reports a difference with 2.
    const nonEmpty = await prisma(['migrate', 'diff', '--from-empty', '--to-schema', 'prisma/schema.prisma', '--exit-code'], { url });
    expect(nonEmpty.code).toBe(2);
  });

  it('db execute sends a script whole (dollar-quoted blocks, semicolons in literals)', async () => {
    const url = await createDb('exec');
    const script = [
      `CREATE TABLE pe_probe (id int PRIMARY KEY, note text, kind "char");`,
      `INSERT INTO pe_probe VALUES (1, 'a;b', 'x');`,
      `DO $$ BEGIN IF (SELECT count(*) FROM pe_probe) = 1 THEN INSERT INTO pe_probe VALUES (2, 'c;d', 'y'); END IF; END $$;`,
    ].join('\n');
    const run = await prisma(['db', 'execute', '--stdin'], { url, input: script });
    expect(run.out).toContain('Script executed successfully');
    expect(run.code).toBe(0);
    expect(await query(url, 'SELECT id, note FROM pe_probe ORDER BY id')).toEqual([
      { id: 1, note: 'a;b' },
      { id: 2, note: 'c;d' },
    ]);

    // Introspection of a "char" column (prisma/orm#27403) works.
    const pull = await prisma(['db', 'pull', '--print'], { url });
    expect(pull.code).toBe(0);
    expect(pull.out).toMatch(/model pe_probe \{/);
  });

  it('migrate dev applies pending migrations, then creates the next one (shadow database)', async () => {
    const url = await createDb('dev');
    const project = path.join(here, '../.tmp', suffix);
    fs.mkdirSync(path.join(project, 'prisma'), { recursive: true });
    fs.cpSync(migrationsDir, path.join(project, 'prisma/migrations'), { recursive: true });
    const schema = fs.readFileSync(path.join(root, 'prisma/schema.prisma'), 'utf8').replace(/generator client \{[^}]*\}/, '');
    fs.writeFileSync(path.join(project, 'prisma/schema.prisma'), `${schema}\nmodel PeProbe {\n  id Int @id\n  note String?\n\n  @@map("pe_probe")\n}\n`);
    fs.writeFileSync(
      path.join(project, 'prisma.config.ts'),
      [
        `import { defineConfig } from 'prisma/config';`,
        `import { prismaEngineEnv } from '../../config.ts';`,
        `Object.assign(process.env, prismaEngineEnv());`,
        `export default defineConfig({ schema: 'prisma/schema.prisma', migrations: { path: 'prisma/migrations' }, datasource: { url: process.env.DATABASE_URL! } });`,
      ].join('\n'),
    );
    const dev = await prisma(['migrate', 'dev', '--name', 'probe'], { url, cwd: project });
    expect(dev.out).toContain('Your database is now in sync with your schema');
    expect(dev.code).toBe(0);
    const created = fs.readdirSync(path.join(project, 'prisma/migrations')).filter((n) => n.endsWith('_probe'));
    expect(created).toHaveLength(1);
    expect(fs.readFileSync(path.join(project, 'prisma/migrations', created[0]!, 'migration.sql'), 'utf8')).toContain('CREATE TABLE "pe_probe"');
  });

  it('leaves no shadow databases behind', async () => {
    const left = (await shadowDbs()).filter((n) => !shadowBefore.includes(n));
    expect(left).toEqual([]);
  });

  it('generate works offline', async () => {
    const out = path.join(here, '../.tmp', suffix, 'client');
    const schemaFile = path.join(here, '../.tmp', suffix, 'generate.prisma');
    fs.mkdirSync(path.dirname(schemaFile), { recursive: true });
    fs.writeFileSync(
      schemaFile,
      fs.readFileSync(path.join(root, 'prisma/schema.prisma'), 'utf8').replace(/output\s*=\s*"[^"]*"/, `output = ${JSON.stringify(out)}`),
    );
    const gen = await prisma(['generate', '--schema', schemaFile]);
    expect(gen.out).toContain('Generated Prisma Client');
    expect(gen.code).toBe(0);
    expect(fs.existsSync(path.join(out, 'client.ts'))).toBe(true);

    const version = await prisma(['version']);
    expect(version.out).toMatch(/Schema Engine\s*: schema-engine-cli \w+ \(at tooling\/prisma-engine\/schema-engine/);
  });
});
