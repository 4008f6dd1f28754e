import { createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient } from '@beton/jobs';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
// `npm run beton -- <args>` runs this: the built CLI (dist/, built by the suite's global setup).
const launcher = path.join(root, 'bin/beton.mjs');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `beton <args>` as its own process, as an operator would. */
function beton(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [launcher, 'cli', ...args], { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('beton CLI (a real process on a test database)', () => {
  let db: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase('cli');
    env = { DATABASE_URL: db.url, USER: 'tester' };
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('jobs stats: counts per queue and status, as a table and as JSON', async () => {
    const jobs = createJobClient(db.pool, jobDefinitions);
    await jobs.enqueueMany('noop', [{ payload: { key: 'stats-1' } }, { payload: { key: 'stats-2' } }]);

    const json = await beton(['jobs', 'stats', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ maintenance: { queued: 2, running: 0, retrying: 0, done: 0, failed: 0, superseded: 0 } });

    const table = await beton(['jobs', 'stats'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/queue\s+queued\s+running\s+retrying\s+done\s+failed\s+superseded\s+total/);
    expect(table.stdout).toMatch(/maintenance\s+2\s+0\s+0\s+0\s+0\s+0\s+2/);
  });

  it('enqueue: a valid payload is written; a bad payload or bad JSON is refused with one line and exit 2', async () => {
    const ok = await beton(['enqueue', 'noop', '{"key":"cli-1"}'], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/Enqueued noop as job \d+ \(key noop:cli-1, queue maintenance\)/);
    const again = await beton(['enqueue', 'noop', '{"key":"cli-1"}'], env);
    expect(again.stdout).toMatch(/Already enqueued/);
    const { rows } = await db.pool.query(`select status from jobs where idempotency_key = 'noop:cli-1'`);
    expect(rows).toEqual([{ status: 'queued' }]);

    const badPayload = await beton(['enqueue', 'noop', '{"key":42}'], env);
    expect(badPayload.code).toBe(2);
    expect(badPayload.stderr.trim()).toBe('beton enqueue: invalid payload for "noop": key: Invalid input: expected string, received number');
    expect(badPayload.stdout).toBe('');

    const badJson = await beton(['enqueue', 'noop', '{key:'], env);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/^beton enqueue: the payload is not valid JSON/);
    expect(badJson.stderr.trim().split('\n')).toHaveLength(1);

    const unknown = await beton(['enqueue', 'no-such-task', '{}'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown task "no-such-task"/);
  });

  it('jobs retry --all-failed: failed jobs go back to queued, audited as cli:<user>', async () => {
    const jobs = createJobClient(db.pool, jobDefinitions);
    const { ids } = await jobs.enqueueMany('noop', [{ payload: { key: 'dlq-1' } }, { payload: { key: 'dlq-2' } }]);
    // As the engine leaves a job whose attempts are exhausted.
    await db.pool.query(
      `update jobs set status = 'failed', attempts = 6, last_error_code = 'provider_unavailable', last_error = '503 Service Unavailable', finished_at = now()
       where id = any($1::bigint[])`,
      [ids],
    );

    const list = await beton(['jobs', 'list', '--status', 'failed'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/id\s+task\s+attempts\s+error code\s+last error/);
    expect(list.stdout).toMatch(/noop\s+6\/6\s+provider_unavailable\s+503 Service Unavailable/);

    const retry = await beton(['jobs', 'retry', '--all-failed'], env);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toMatch(/Retried 2 jobs \(as cli:tester\)/);
    const after = await db.pool.query(`select status, attempts from jobs where id = any($1::bigint[])`, [ids]);
    expect(after.rows).toEqual([
      { status: 'queued', attempts: 0 },
      { status: 'queued', attempts: 0 },
    ]);
    const audit = await db.pool.query(`select actor, action, details from audit_log where action = 'retry-failed-jobs'`);
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({ actor: 'cli:tester' });

    const none = await beton(['jobs', 'retry', '--all-failed'], env);
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/No failed jobs to retry/);
  });

  it('users create: a one-time password printed once, to be changed at the first sign-in, audited as cli:<user>; bad input is one line', async () => {
    await seedDatabase(db.pool, { employees: 6, companies: 2, reset: true });
    const company = (await db.pool.query<{ id: string; name: string }>('select id, name from companies order by name limit 1')).rows[0]!;
    const made = await beton(['users', 'create', '--email', 'ops.hr@example.com', '--role', 'hr', '--company', company.name], env);
    expect(made.code, made.stderr).toBe(0);
    const otp = /One-time password \(shown only now; it must be changed at the first sign-in\): ([A-Za-z0-9]{16})$/m.exec(made.stdout)?.[1];
    expect(otp).toBeDefined();
    expect(made.stdout).toContain(`Created HR ops.hr@example.com for ${company.name}.`);
    const { rows } = await db.pool.query(
      `select u.role, u.company_id, u.must_change_password, a.password from users u join accounts a on a.user_id = u.id where u.email = 'ops.hr@example.com'`,
    );
    expect(rows).toEqual([{ role: 'HR', company_id: company.id, must_change_password: true, password: expect.stringMatching(/^\$argon2id\$/) }]);
    expect(JSON.stringify(rows)).not.toContain(otp);
    const audit = await db.pool.query(`select actor from audit_log where action = 'create-user'`);
    expect(audit.rows).toEqual([{ actor: 'cli:tester' }]);

    const list = await beton(['users', 'list', '--json'], env);
    expect(JSON.parse(list.stdout).find((u: { email: string }) => u.email === 'ops.hr@example.com')).toMatchObject({ role: 'HR', mustChangePassword: true });

    for (const [args, code, message] of [
      [
        ['users', 'create', '--email', 'ops.hr@example.com', '--role', 'HR', '--company', company.id],
        1,
        /A user with the email ops\.hr@example\.com already exists/,
      ],
      [['users', 'create', '--email', 'x@example.com', '--role', 'HR'], 2, /an HR manager belongs to one company/],
      [['users', 'create', '--email', 'x@example.com', '--role', 'boss'], 2, /--role must be HR or ADMIN, got "boss"/],
      [['users', 'create', '--email', 'x@example.com', '--role', 'HR', '--company', 'No Such Ltd'], 1, /No company named "No Such Ltd"/],
    ] as const) {
      const run = await beton([...args], env);
      expect([run.code, run.stderr.trim().split('\n')[0]]).toEqual([code, expect.stringMatching(message)]);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    expect((await db.pool.query(`select count(*)::int as n from users where email = 'x@example.com'`)).rows[0].n).toBe(0);
  });

  it("companies create / list: the admin console's checks, audited as cli:<user>; bad input is one line", async () => {
    const made = await beton(['companies', 'create', '--name', 'Jamuna Knits', '--schedule', '0 3 1 * *', '--protect-slips'], env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain('Created company Jamuna Knits');
    const { rows } = await db.pool.query(`select time_zone, payroll_schedule, deadline, protect_slips from companies where name = 'Jamuna Knits'`);
    expect(rows).toEqual([{ time_zone: 'Asia/Dhaka', payroll_schedule: '0 3 1 * *', deadline: '09:00', protect_slips: true }]);
    expect((await db.pool.query(`select actor from audit_log where action = 'create-company'`)).rows).toEqual([{ actor: 'cli:tester' }]);
    const list = await beton(['companies', 'list', '--json'], env);
    expect(JSON.parse(list.stdout).find((c: { name: string }) => c.name === 'Jamuna Knits')).toMatchObject({ protectSlips: true, employees: 0, hrUsers: 0 });
    for (const [args, code, message] of [
      [['companies', 'create', '--name', 'Jamuna Knits'], 1, /name: A company of this name exists/],
      [['companies', 'create', '--name', 'X Ltd', '--time-zone', 'Mars/Olympus'], 1, /timeZone: Not a time zone/],
      [['companies', 'create', '--name', 'X Ltd', '--schedule', 'monthly'], 1, /payrollSchedule: Not a schedule/],
      [['companies', 'create'], 2, /--name is required/],
    ] as const) {
      const run = await beton([...args], env);
      expect([run.code, run.stderr.trim().split('\n')[0]]).toEqual([code, expect.stringMatching(message)]);
    }
  });

  it('slips export: the audited way to read one slip (with a reason); without a reason nothing is read', async () => {
    const emp = (await db.pool.query<{ id: number }>('select id from employees order by id limit 1')).rows[0]!.id;
    const slip = (
      await db.pool.query<{ id: number }>(
        `insert into slips (employee_id, month, key, pdf, sha256, bytes) values ($1, '2026-11', 'slip:cli-export', $2, 'x', 12) returning id`,
        [emp, Buffer.from('%PDF-1.4 cli')],
      )
    ).rows[0]!.id;
    const out = path.join(root, `.beton/test-slip-${process.pid}.pdf`);
    const { rmSync, readFileSync } = await import('node:fs');
    rmSync(out, { force: true });
    try {
      const noReason = await beton(['slips', 'export', '--slip', String(slip), '--out', out], env);
      expect(noReason.code).toBe(2);
      expect(noReason.stderr).toMatch(/--reason is required/);
      expect((await db.pool.query(`select count(*)::int as n from audit_log where action = 'export-slip'`)).rows[0].n).toBe(0);
      const run = await beton(['slips', 'export', '--slip', String(slip), '--reason', 'ticket 4711: disputed net pay', '--out', out], env);
      expect(run.code, run.stderr).toBe(0);
      expect(readFileSync(out, 'utf8')).toBe('%PDF-1.4 cli');
      const audit = await db.pool.query(`select actor, details from audit_log where action = 'export-slip'`);
      expect(audit.rows).toEqual([
        { actor: 'cli:tester', details: expect.objectContaining({ slipId: slip, employeeId: emp, reason: 'ticket 4711: disputed net pay' }) },
      ]);
      const again = await beton(['slips', 'export', '--slip', String(slip), '--reason', 'ticket 4711: disputed net pay', '--out', out], env);
      expect([again.code, again.stderr.trim()]).toEqual([1, expect.stringMatching(/it exists/)]);
    } finally {
      rmSync(out, { force: true });
    }
  });

  it('usage errors exit 2; an unreachable DATABASE_URL is one masked line with the fix, exit 1', async () => {
    const unknown = await beton(['frobnicate'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"[\s\S]*Usage: npm run beton/);

    const down = await beton(['jobs', 'stats'], { DATABASE_URL: 'postgres://beton:s3cret@127.0.0.1:1/beton' });
    expect(down.code).toBe(1);
    const lines = down.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Cannot reach PostgreSQL at postgres:\/\/beton:\*\*\*@127\.0\.0\.1:1\/beton .*unset DATABASE_URL/);
    expect(down.stderr).not.toContain('s3cret');
  });

  it('plan --json gives the story figures without a database', async () => {
    const run = await beton(['plan', '--story', '--json'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(run.code, run.stderr).toBe(0);
    const plan = JSON.parse(run.stdout);
    expect(plan.render.workers).toBe(24);
    expect(plan.email.workersPerMachine).toBe(480);
    expect(plan.email.perSecond).toBe(37.5);
    expect(plan.naive.slipsInWindow).toBe(12_600);
  });

  it('plan plans on the measured costs of docs/capacity.json, and says what is missing', async () => {
    const noDb = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
    const run = await beton(['plan', '--costs', 'docs/capacity.json', '--employees', '500000', '--provider-rate', '1000', '--rate', 'fastest', '--json'], noDb);
    expect(run.code, run.stderr).toBe(0);
    const plan = JSON.parse(run.stdout);
    expect(plan.costsFile).toBe('docs/capacity.json');
    expect(plan.slipsPerSecond).toBe(1000);
    expect(plan.render.processes).toBeGreaterThanOrEqual(1);
    expect(plan.email.concurrencyLimit).toBeGreaterThan(1000);
    expect(plan.database.connections).toBeGreaterThan(0);
    expect(plan.cost).toBeGreaterThan(0);
    const text = await beton(['plan', '--costs', 'docs/capacity.json', '--employees', '50000'], noDb);
    expect(text.stdout).toMatch(/Machines: \d+ × 8-core for the workers \+ one database server of \d+ cores/);
    const missing = await beton(['plan', '--costs', 'no/such.json'], noDb);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no measured costs at .*no\/such\.json: run `npm run bench -- --json` first/);
    const story = await beton(['plan', '--render-ms', '800'], noDb);
    expect(story.code).toBe(2);
    expect(story.stderr).toContain("--render-ms is the story's planner: add --story");
  });
});

describe('beton payroll run (a real process on a seeded test database)', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let companies: Array<{ id: string; name: string; employees: number }>;
  const renderJobs = async (month: string) =>
    (
      await db.pool.query<{ company_id: string; n: number; employees: number }>(
        `select company_id, count(*)::int as n, count(distinct employee_id)::int as employees from jobs where task_name = 'render-slip' and payload->>'month' = $1 group by 1`,
        [month],
      )
    ).rows;
  const oneLine = (run: Run) => {
    const lines = run.stderr.trim().split('\n');
    expect(lines, run.stderr).toHaveLength(1);
    expect(run.stderr).not.toMatch(/\n\s+at |Error:/);
    return lines[0];
  };

  beforeAll(async () => {
    db = await createTestDatabase('cli-payroll');
    await seedDatabase(db.pool, { employees: 25, companies: 3, invalidRate: 0, seed: 5 });
    env = { DATABASE_URL: db.url, USER: 'tester' };
    companies = (
      await db.pool.query<{ id: string; name: string; employees: number }>(
        `select c.id, c.name, count(e.id)::int as employees from companies c join employees e on e.company_id = c.id group by c.id, c.name order by c.name`,
      )
    ).rows;
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('runs a month for every company: one render-slip job per employee, one payroll run per company', async () => {
    const run = await beton(['payroll', 'run', '--month', '2026-11'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Payroll 2026-11: enqueuing slips for 3 companies…$/m);
    expect(run.stdout).toMatch(/^Done in \d+\.\d\d s: 25 render-slip jobs enqueued for 3 companies$/m);
    const jobs = await renderJobs('2026-11');
    expect(jobs.map((j) => [j.company_id, j.n, j.employees]).sort()).toEqual(companies.map((c) => [c.id, c.employees, c.employees]).sort());
    const runs = await db.pool.query(`select company_id, status, employee_count, created_by from payroll_runs where month = '2026-11' order by company_id`);
    expect(runs.rows).toHaveLength(3);
    for (const r of runs.rows) expect(r).toMatchObject({ status: 'running', created_by: expect.stringMatching(/^cli:tester@/) });
  });

  it('--company runs one company only', async () => {
    const [, second] = companies;
    const run = await beton(['payroll', 'run', '--month', '2026-10', '--company', second!.id], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Payroll 2026-10: enqueuing slips for ${second!.name} (${second!.id})…`);
    expect(run.stdout).toMatch(new RegExp(`^Done in \\d+\\.\\d\\d s: ${second!.employees} render-slip jobs enqueued for 1 company$`, 'm'));
    expect(await renderJobs('2026-10')).toEqual([{ company_id: second!.id, n: second!.employees, employees: second!.employees }]);
    const runs = await db.pool.query(`select company_id from payroll_runs where month = '2026-10'`);
    expect(runs.rows).toEqual([{ company_id: second!.id }]);
  });

  it('a second run of the same month says it was already done and enqueues nothing', async () => {
    const count = async (task: string) => (await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs where task_name = $1`, [task])).rows[0]!.n;
    const before = {
      slips: await count('render-slip'),
      transfers: await count('submit-bank-transfers'),
      all: (await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs`)).rows[0]!.n,
    };
    const all = await beton(['payroll', 'run', '--month', '2026-11'], env);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/^Already done: payroll 2026-11 was already run for all 3 companies; nothing enqueued\.$/m);
    const one = await beton(['payroll', 'run', '--month', '2026-10', '--company', companies[1]!.id], env);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^Already done: payroll 2026-10 was already run for this company; nothing enqueued\.$/m);
    // The rest of 2026-10: the company already run is skipped, the other two are run.
    const rest = await beton(['payroll', 'run', '--month', '2026-10'], env);
    expect(rest.stdout).toMatch(
      new RegExp(
        `^Done in \\d+\\.\\d\\d s: ${companies[0]!.employees + companies[2]!.employees} render-slip jobs enqueued for 2 companies; 1 already run for 2026-10 \\(skipped\\)$`,
        'm',
      ),
    );
    // Each company run adds its render-slip jobs and one submit-bank-transfers job, nothing else.
    expect((await count('render-slip')) - before.slips).toBe(companies[0]!.employees + companies[2]!.employees);
    expect((await count('submit-bank-transfers')) - before.transfers).toBe(2);
    const after = (await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs`)).rows[0]!.n;
    expect(after - before.all).toBe(companies[0]!.employees + companies[2]!.employees + 2);
  });

  it('a bad month or an unknown company: one line, no stack, non-zero exit, nothing enqueued', async () => {
    const before = await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs`);
    const month = await beton(['payroll', 'run', '--month', '2026-13'], env);
    expect(month.code).toBe(2);
    expect(oneLine(month)).toBe('beton payroll run: Invalid month "2026-13": expected YYYY-MM, e.g. 2026-11');

    const missing = '00000000-0000-4000-a000-000000000000';
    const unknown = await beton(['payroll', 'run', '--month', '2026-09', '--company', missing], env);
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown)).toBe(`beton payroll run: No company with id ${missing}`);
    expect(unknown.stdout).toBe('');

    const notAnId = await beton(['payroll', 'run', '--month', '2026-09', '--company', 'surma'], env);
    expect(notAnId.code).toBe(2);
    expect(oneLine(notAnId)).toBe('beton payroll run: --company must be a company id (uuid), got "surma"');

    const after = await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs`);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    expect((await db.pool.query(`select 1 from payroll_runs where month = '2026-09'`)).rowCount).toBe(0);
  });
});
