import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { AlreadySeededError, companySizes, seedDatabase } from '../src/seed.ts';
import { checkDatabase, createPool } from '../src/pool.ts';
import { DatabaseUnreachableError } from '../src/errors.ts';
import { maskUrl } from '../src/url.ts';
import { prng } from '../src/random.ts';
import { verifyPassword } from '../src/password.ts';
import { createUser, listUsers, UserInputError } from '../src/users.ts';
import { embeddedPasswordFile, freePort, startEmbeddedPostgres } from '../src/embedded.ts';
import { existsSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

describe('data model guarantees', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('model');
    await seedDatabase(db.pool, { employees: 20, companies: 2 });
  });
  afterAll(() => db?.drop());

  it('payroll_runs rejects a second run for the same company and month', async () => {
    const company = (await db.pool.query<{ id: string }>('select id from companies limit 1')).rows[0]!.id;
    await db.pool.query(`insert into payroll_runs (company_id, month, created_by) values ($1, '2026-11', 'server-a')`, [company]);
    await expect(db.pool.query(`insert into payroll_runs (company_id, month, created_by) values ($1, '2026-11', 'server-b')`, [company])).rejects.toMatchObject(
      {
        code: '23505',
        constraint: 'payroll_runs_company_id_month_key',
      },
    );
    await db.pool.query(`insert into payroll_runs (company_id, month, created_by) values ($1, '2026-10', 'server-b')`, [company]);
  });

  it('jobs.idempotency_key is unique', async () => {
    const insert = () =>
      db.pool.query(
        `insert into jobs (task_name, queue, payload, max_attempts, idempotency_key) values ('noop', 'maintenance', '{}', 6, 'slip:2026-11:emp-1')`,
      );
    await insert();
    await expect(insert()).rejects.toMatchObject({ code: '23505' });
  });

  it('run_job_counts follows every insert, update, delete and truncate of jobs (the HR progress counters)', async () => {
    const [r1, r2] = ['00000000-0000-4000-a000-000000000001', '00000000-0000-4000-a000-000000000002'];
    const counts = async () =>
      (
        await db.pool.query<{ k: string; n: number }>(
          `select payroll_run_id || ' ' || task_name || ' ' || status as k, n from run_job_counts where n <> 0 order by 1`,
        )
      ).rows.map((r) => `${r.k} ${r.n}`);
    const truth = async () =>
      (
        await db.pool.query<{ k: string; n: number }>(
          `select payroll_run_id || ' ' || task_name || ' ' || status as k, count(*)::int as n from jobs where payroll_run_id is not null group by 1 order by 1`,
        )
      ).rows.map((r) => `${r.k} ${r.n}`);
    await db.pool.query(
      `insert into jobs (task_name, queue, payload, max_attempts, idempotency_key, payroll_run_id)
       select case when i % 2 = 0 then 'render-slip' else 'send-slip-email' end, 'q', '{}', 6, 'count-' || i, case when i < 30 then $1::uuid when i < 40 then $2::uuid end
       from generate_series(0, 49) i`,
      [r1, r2],
    );
    expect(await counts()).toEqual([
      `${r1} render-slip queued 15`,
      `${r1} send-slip-email queued 15`,
      `${r2} render-slip queued 5`,
      `${r2} send-slip-email queued 5`,
    ]);
    // Statements that move some rows, leave others (a heartbeat), and mix both runs.
    await db.pool.query(`update jobs set status = 'running' where idempotency_key like 'count-%' and substr(idempotency_key, 7)::int % 3 = 0`);
    await db.pool.query(`update jobs set heartbeat_at = now() where idempotency_key like 'count-%'`);
    await db.pool.query(`update jobs set status = 'done' where idempotency_key like 'count-%' and status = 'running' and substr(idempotency_key, 7)::int < 20`);
    await db.pool.query(`delete from jobs where idempotency_key in ('count-0', 'count-1', 'count-31')`);
    expect(await counts()).toEqual(await truth());
    expect((await counts()).join('\n')).toContain(`${r1} render-slip done 3`); // 6, 12, 18 (0 deleted)
    // Two connections moving the same run's jobs at once: no deadlock, nothing lost.
    await Promise.all([
      db.pool.query(
        `update jobs set status = 'failed', last_error_code = 'x' where idempotency_key like 'count-%' and status = 'queued' and substr(idempotency_key, 7)::int % 2 = 0`,
      ),
      db.pool.query(
        `update jobs set status = 'retrying' where idempotency_key like 'count-%' and status = 'queued' and substr(idempotency_key, 7)::int % 2 = 1`,
      ),
    ]);
    expect(await counts()).toEqual(await truth());
    await db.pool.query(`truncate jobs cascade`);
    expect(await counts()).toEqual([]);
  });

  it('queue_job_counts follows every insert, update, delete and truncate of jobs, from many connections at once (queue depths without a scan)', async () => {
    const counts = async () =>
      (
        await db.pool.query<{ k: string; n: number }>(
          `select queue || ' ' || status as k, sum(n)::int as n from queue_job_counts group by 1 having sum(n) <> 0 order by 1`,
        )
      ).rows.map((r) => `${r.k} ${r.n}`);
    const truth = async () =>
      (await db.pool.query<{ k: string; n: number }>(`select queue || ' ' || status as k, count(*)::int as n from jobs group by 1 order by 1`)).rows.map(
        (r) => `${r.k} ${r.n}`,
      );
    await db.pool.query(`truncate jobs cascade`);
    await db.pool.query(
      `insert into jobs (task_name, queue, payload, max_attempts, idempotency_key)
       select 'noop', case when i % 3 = 0 then 'pdf-render' when i % 3 = 1 then 'send-email' else 'maintenance' end, '{}', 6, 'qcount-' || i
       from generate_series(0, 299) i`,
    );
    expect(await counts()).toEqual(['maintenance queued 100', 'pdf-render queued 100', 'send-email queued 100']);
    // Eight connections claim, finish, fail and delete jobs at the same time, many statements each.
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let round = 0; round < 10; round++) {
          const ids = `substr(idempotency_key, 8)::int % 80 = ${w * 10 + round}`;
          await db.pool.query(`update jobs set status = 'running' where ${ids}`);
          await db.pool.query(
            `update jobs set status = case when id % 2 = 0 then 'done'::"JobStatus" else 'failed'::"JobStatus" end, last_error_code = 'x' where ${ids}`,
          );
          if (round % 3 === 0) await db.pool.query(`delete from jobs where ${ids} and status = 'done'`);
        }
      }),
    );
    expect(await counts()).toEqual(await truth());
    // Each statement wrote to its own connection's stripe: several stripes, each a few rows.
    const stripes = (await db.pool.query<{ n: number }>(`select count(distinct slot)::int as n from queue_job_counts`)).rows[0]!.n;
    expect(stripes).toBeGreaterThan(1);
    await db.pool.query(`truncate jobs cascade`);
    expect(await counts()).toEqual([]);
  });

  it("a job's way to done rewrites no index entry of jobs (HOT updates), and a failed job needs an error code", async () => {
    const client = await db.pool.connect();
    const updates = async () => {
      await client.query('select pg_stat_force_next_flush()');
      await client.query('select 1'); // a transaction ends: this backend's counts are flushed
      await client.query('select pg_stat_clear_snapshot()');
      return (
        await client.query<{ upd: number; hot: number }>(
          `select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = 'jobs'`,
        )
      ).rows[0]!;
    };
    try {
      await client.query(
        `insert into jobs (task_name, queue, payload, max_attempts, idempotency_key, company_id, payroll_run_id, employee_id)
         select 'render-slip', 'pdf-render', '{"companyId":"00000000-0000-4000-a000-000000000000","employeeId":1,"month":"2026-11"}', 6,
                'slip:2026-11:hot-' || i, gen_random_uuid(), gen_random_uuid(), i from generate_series(1, 400) i`,
      );
      const before = await updates();
      // The engine's transitions, each batch its own transaction as in the engine: claimed
      // (running, attempt, worker, times), then done a batch later.
      const batch = (k: number) => `'slip:2026-11:hot-' || g from generate_series(${k * 20 + 1}, ${k * 20 + 20}) g`;
      for (let k = 0; k <= 20; k++) {
        if (k < 20)
          await client.query(
            `update jobs set status = 'running', attempts = attempts + 1, worker_id = 'w', started_at = now(), heartbeat_at = now(), updated_at = now() where idempotency_key in (select ${batch(k)})`,
          );
        if (k > 0)
          await client.query(
            `update jobs set status = 'done', finished_at = now(), worker_id = null, updated_at = now() where idempotency_key in (select ${batch(k - 1)})`,
          );
      }
      const after = await updates();
      // Statistics are counters a busy server may flush late or add to: bounds, not equalities.
      const updated = after.upd - before.upd;
      expect(updated).toBeGreaterThanOrEqual(800);
      // 781 of 800 on a quiet machine, 724 and 442 in full suites on a loaded one (a page's free
      // space depends on when pruning ran); with a status index none would be (every index gets a
      // new entry): a bound that tells the two apart, not the quiet machine's figure.
      expect((after.hot - before.hot) / updated).toBeGreaterThanOrEqual(0.3);
      await expect(client.query(`update jobs set status = 'failed' where idempotency_key = 'slip:2026-11:hot-1'`)).rejects.toMatchObject({ code: '23514' });
    } finally {
      await client.query(`delete from jobs where idempotency_key like 'slip:2026-11:hot-%'`);
      client.release();
    }
  });

  it("has indexes for what the status indexes answered: failed jobs by error code, running jobs by open attempt, a run's recent emails", async () => {
    const client = await db.pool.connect();
    try {
      await client.query('begin');
      await client.query('set local enable_seqscan = off'); // small tables would be scanned anyway
      const plan = async (sql: string) => (await client.query(`explain ${sql}`)).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(await plan(`select count(*) from jobs where status = 'failed' and last_error_code is not null`)).toMatch(/jobs_last_error_code_idx/);
      expect(await plan(`select count(*) from job_attempts where finished_at is null`)).toMatch(/job_attempts_finished_at_idx/);
      expect(
        await plan(
          `select count(*) from job_attempts where payroll_run_id = '00000000-0000-4000-a000-000000000000' and task_name = 'send-slip-email' and finished_at > now() - interval '5 minutes'`,
        ),
      ).toMatch(/job_attempts_payroll_run_id_task_name_finished_at_idx/);
      await client.query('rollback');
    } finally {
      client.release();
    }
  });

  it("stores a slip's PDF out of line without trying to compress it (its streams are deflated already: pglz's try was thrown away)", async () => {
    const { rows } = await db.pool.query<{ attstorage: string }>(`select attstorage from pg_attribute where attrelid = 'slips'::regclass and attname = 'pdf'`);
    expect(rows[0]?.attstorage).toBe('e'); // EXTERNAL; the default for bytea is 'x' (EXTENDED: compress, then out of line)
  });
});

describe("Beton's connections", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('connections');
  });
  afterAll(() => db?.drop());

  it('plan no parallel query (a misestimated read launched two workers: 27–33 ms for 0.1 ms of work), unless a pool says otherwise', async () => {
    const show = async (pool: pg.Pool) =>
      (await pool.query<{ v: string; p: string }>(`select current_setting('max_parallel_workers_per_gather') as v, current_setting('plan_cache_mode') as p`))
        .rows[0];
    const plain = createPool({ url: db.url });
    const tuned = createPool({ url: db.url, settings: { plan_cache_mode: 'force_generic_plan' } });
    const parallel = createPool({ url: db.url, settings: { max_parallel_workers_per_gather: '2' } });
    try {
      expect(await show(plain)).toEqual({ v: '0', p: 'auto' });
      expect(await show(tuned)).toEqual({ v: '0', p: 'force_generic_plan' });
      expect((await show(parallel))!.v).toBe('2');
      // A read PostgreSQL would otherwise run in parallel: a scan of a table made big enough.
      await plain.query(`create table wide as select g as id, md5(g::text) as t from generate_series(1, 300000) g`);
      await plain.query('analyze wide');
      const plan = async (pool: pg.Pool) =>
        (await pool.query<{ 'QUERY PLAN': string }>(`explain select count(*) from wide where t like '%ab%'`)).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(await plan(parallel)).toContain('Gather');
      expect(await plan(plain)).not.toContain('Gather');
    } finally {
      await Promise.all([plain.end(), tuned.end(), parallel.end()]);
    }
  });
});

describe('seed', () => {
  it('is deterministic: the same seed gives the same rows', async () => {
    const [a, b] = await Promise.all([createTestDatabase('seed_a'), createTestDatabase('seed_b')]);
    try {
      await seedDatabase(a.pool, { employees: 500, companies: 7, seed: 42 });
      await seedDatabase(b.pool, { employees: 500, companies: 7, seed: 42 });
      const dump = async (d: TestDatabase) =>
        (
          await d.pool.query(`select c.id, c.name, e.code, e.name_latin, e.name_bengali, e.email, e.salary, e.bank_account
                             from employees e join companies c on c.id = e.company_id order by c.id, e.code`)
        ).rows;
      expect(await dump(a)).toEqual(await dump(b));
      const users = async (d: TestDatabase) => (await d.pool.query('select email, role from users order by email')).rows;
      expect(await users(a)).toEqual(await users(b));
      await expect(seedDatabase(a.pool, { employees: 10 })).rejects.toThrow(AlreadySeededError);
    } finally {
      await Promise.all([a.drop(), b.drop()]);
    }
  });

  it('the same seed never gives the same passwords: nobody can compute a login from the source', async () => {
    const [a, b] = await Promise.all([createTestDatabase('seed_pw_a'), createTestDatabase('seed_pw_b')]);
    try {
      const [one, two] = [
        await seedDatabase(a.pool, { employees: 30, companies: 3, seed: 7 }),
        await seedDatabase(b.pool, { employees: 30, companies: 3, seed: 7 }),
      ];
      expect(one.logins.map((l) => l.email)).toEqual(two.logins.map((l) => l.email));
      const passwords = [...one.logins, ...two.logins].map((l) => l.password);
      expect(new Set(passwords).size).toBe(passwords.length);
      for (const p of passwords) expect(p).toMatch(/^[A-Za-z0-9]{16}$/);
      // Each works only where it was printed.
      const hashOf = async (d: TestDatabase, email: string) =>
        (await d.pool.query<{ password: string }>(`select a.password from accounts a join users u on u.id = a.user_id where u.email = $1`, [email])).rows[0]!
          .password;
      const admin = one.logins[0]!;
      expect(await verifyPassword(await hashOf(a, admin.email), admin.password)).toBe(true);
      expect(await verifyPassword(await hashOf(b, admin.email), admin.password)).toBe(false);
    } finally {
      await Promise.all([a.drop(), b.drop()]);
    }
  });

  it('makes uneven company sizes that add up, Bengali names, and about the asked share of invalid addresses', async () => {
    const sizes = companySizes(50_000, 60, prng(1));
    expect(sizes.reduce((x, y) => x + y, 0)).toBe(50_000);
    expect(Math.max(...sizes)).toBeGreaterThan(4 * Math.min(...sizes));
    const db = await createTestDatabase('seed_share');
    try {
      const result = await seedDatabase(db.pool, { employees: 4000, companies: 10, invalidRate: 0.05 });
      expect(result.invalidEmails / 4000).toBeGreaterThan(0.035);
      expect(result.invalidEmails / 4000).toBeLessThan(0.065);
      const bad = await db.pool.query<{ n: number }>(`select count(*)::int as n from employees where email !~ '^[^@\\s]+@[^@\\s.]+(\\.[^@\\s.]+)+$'`);
      expect(bad.rows[0]!.n).toBe(result.invalidEmails);
      const bengali = await db.pool.query<{ name_bengali: string }>('select name_bengali from employees limit 1');
      expect(bengali.rows[0]!.name_bengali).toMatch(/[\u0980-\u09FF]/);
      expect(result.logins.filter((l) => l.role === 'HR')).toHaveLength(10);
      expect(result.logins.filter((l) => l.role === 'ADMIN')).toHaveLength(1);
    } finally {
      await db.drop();
    }
  });

  it('refuses nonsense sizes with a clear message', async () => {
    const db = await createTestDatabase('seed_bad');
    try {
      await expect(seedDatabase(db.pool, { employees: -1 })).rejects.toThrow(/employees must be a whole number/);
      await expect(seedDatabase(db.pool, { invalidRate: 2 })).rejects.toThrow(/invalidRate must be between 0 and 1/);
    } finally {
      await db.drop();
    }
  });
});

describe('users', () => {
  it('createUser: a one-time password (cryptographic, hashed, must be changed), audited; bad input named field by field', async () => {
    const db = await createTestDatabase('users');
    try {
      await seedDatabase(db.pool, { employees: 10, companies: 2 });
      const company = (await db.pool.query<{ id: string }>('select id from companies order by name limit 1')).rows[0]!.id;
      const made = await createUser(db.pool, { email: ' New.HR@Example.com ', name: 'New HR', role: 'HR', companyId: company }, 'cli:ops');
      expect(made.email).toBe('new.hr@example.com');
      expect(made.oneTimePassword).toMatch(/^[A-Za-z0-9]{16}$/);
      const {
        rows: [row],
      } = await db.pool.query<{ must_change_password: boolean; password: string; company_id: string }>(
        `select u.must_change_password, a.password, u.company_id from users u join accounts a on a.user_id = u.id and a.provider_id = 'credential' and a.account_id = u.id::text where u.email = $1`,
        [made.email],
      );
      expect(row).toMatchObject({ must_change_password: true, company_id: company });
      expect(row!.password).toMatch(/^\$argon2id\$/);
      expect(await verifyPassword(row!.password, made.oneTimePassword)).toBe(true);
      const audit = await db.pool.query(`select actor, details from audit_log where action = 'create-user'`);
      expect(audit.rows).toEqual([{ actor: 'cli:ops', details: { userId: made.id, email: made.email, role: 'HR', companyId: company } }]);
      expect((await listUsers(db.pool)).find((u) => u.email === made.email)).toMatchObject({ mustChangePassword: true, role: 'HR', activeSessions: 0 });

      const refused = async (input: Parameters<typeof createUser>[1]) =>
        (await createUser(db.pool, input, 'cli:ops').catch((e: unknown) => e)) as UserInputError;
      expect((await refused({ email: 'new.hr@example.com', name: 'Twin', role: 'HR', companyId: company })).fieldErrors).toEqual({ email: 'already a user' });
      expect((await refused({ email: 'x@example.com', name: 'X', role: 'HR' })).fieldErrors).toHaveProperty('companyId');
      expect((await refused({ email: 'x@example.com', name: 'X', role: 'ADMIN', companyId: company })).fieldErrors).toHaveProperty('companyId');
      expect((await refused({ email: 'not-an-address', name: 'X', role: 'ADMIN' })).fieldErrors).toHaveProperty('email');
      expect((await refused({ email: 'x@example.com', name: 'X', role: 'HR', companyId: '00000000-0000-4000-8000-000000000000' })).fieldErrors).toEqual({
        companyId: 'no such company',
      });
      expect((await db.pool.query(`select count(*)::int as n from users where email in ('x@example.com')`)).rows[0].n).toBe(0);
    } finally {
      await db.drop();
    }
  });
});

describe('embedded PostgreSQL', () => {
  it('a random superuser password kept with its data (0600); a cluster with the old fixed password gets a random one on its next start', async () => {
    // Under .beton/ like the suite's own cluster (as root, initdb runs as a `postgres` user that cannot enter a 0700 temp folder).
    const parent = path.resolve(`.beton/test-embedded-${process.pid}-${Date.now()}`);
    const dir = path.join(parent, 'postgres');
    const canConnect = async (password: string, port: number) => {
      const client = new pg.Client({ connectionString: `postgres://postgres:${password}@127.0.0.1:${port}/postgres` });
      return client.connect().then(
        async () => (await client.end(), true),
        () => false,
      );
    };
    try {
      let server = await startEmbeddedPostgres({ dir, port: await freePort(), fast: true });
      const file = embeddedPasswordFile(dir);
      const first = readFileSync(file, 'utf8').trim();
      expect(first).toMatch(/^[A-Za-z0-9]{24}$/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(server.serverUrl).toContain(`:${first}@`);
      expect(await canConnect(first, server.port)).toBe(true);
      expect(await canConnect('beton', server.port)).toBe(false);
      await server.stop();
      // The next start reuses it.
      server = await startEmbeddedPostgres({ dir, port: await freePort(), fast: true });
      expect(server.serverUrl).toContain(`:${first}@`);
      // A cluster made before passwords were random: 'beton' and no password file.
      const c = new pg.Client({ connectionString: `${server.serverUrl}/postgres` });
      await c.connect();
      await c.query(`alter role postgres with password 'beton'`);
      await c.end();
      await server.stop();
      unlinkSync(file);
      server = await startEmbeddedPostgres({ dir, port: await freePort(), fast: true });
      expect(existsSync(file)).toBe(true);
      const rotated = readFileSync(file, 'utf8').trim();
      expect(rotated).toMatch(/^[A-Za-z0-9]{24}$/);
      expect(await canConnect('beton', server.port)).toBe(false);
      expect(await canConnect(rotated, server.port)).toBe(true);
      await server.stop();
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('connection errors', () => {
  it('names the URL with the password masked, and the fix', async () => {
    const url = 'postgres://beton:s3cret@127.0.0.1:1/beton';
    const error = await checkDatabase(url, 2000).catch((e) => e);
    expect(error).toBeInstanceOf(DatabaseUnreachableError);
    expect(error.message).toContain('postgres://beton:***@127.0.0.1:1/beton');
    expect(error.message).not.toContain('s3cret');
    expect(error.message).toMatch(/unset DATABASE_URL to use the embedded PostgreSQL/);
    expect(maskUrl('postgres://u@h/db')).toBe('postgres://u@h/db');
  });
});
