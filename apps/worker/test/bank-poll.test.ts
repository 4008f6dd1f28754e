/**
 * The bank poll (R1 recurring, R11) end to end: two scheduler processes run the same poll
 * schedule (every 2 s here through BANK_POLL_CRON, every 15 min in production), a send-email
 * process, the bank and provider simulators over HTTP, a real PostgreSQL. The monthly run
 * submits the salary transfers to the bank; the test credits them in steps and counts the
 * status emails in the provider simulator's store.
 */
import { createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions, type BetonJobs } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, type JobClient } from '@beton/jobs';
import {
  createBankClient,
  netPay,
  type BankClient,
  pollBankCredits,
  runPayroll,
  salaryTransferReference,
  submitSalaryTransfers,
  type Salary,
} from '@beton/payroll';
import { startBankSimulator, startProviderSimulator, type BankSimulator, type ProviderSimulator } from '@beton/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { spawnWorker, stopAll } from '../../../scripts/lib/processes.ts';

const MONTHS = ['2026-10', '2026-11'] as const;
const WAIT_MS = 60_000;

interface Employee {
  id: number;
  company_id: string;
  bank_account: string;
  salary: Salary;
}

describe('bank poll (two scheduler processes, HTTP, PostgreSQL)', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let bank: BankSimulator;
  let jobs: JobClient<BetonJobs>;
  let employees: Employee[];
  let companies: string[];
  const hrOf = new Map<string, string>();

  /** Status emails in the provider's store, by idempotency key (`bank-status:<company>:<poll window>`). */
  const statusEmails = () => provider.messages().filter((m) => m.customArgs.idempotency_key?.startsWith('bank-status:'));
  const companyOfKey = (key: string) => key.split(':')[1]!;
  const polls = async () => (await db.pool.query<{ due_at: Date; credited: number }>('select due_at, credited from bank_polls order by due_at')).rows;
  const emailJobsSettled = async () =>
    (await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs where task_name = 'send-bank-status-email' and status <> 'done'`)).rows[0]!.n ===
    0;

  /** Credits `refs` at the bank, waits for the poll that finds them and for its emails; returns that poll and the new emails. */
  async function creditAndPoll(refs: string[]) {
    const before = new Set(statusEmails().map((m) => m.id));
    const polled = (await polls()).length;
    expect(bank.credit(refs)).toBe(refs.length);
    const poll = await waitUntil('the poll that finds the credits', async () => (await polls()).slice(polled).find((p) => p.credited > 0), 30_000);
    expect(poll.credited).toBe(refs.length);
    await waitUntil('status emails sent', emailJobsSettled, WAIT_MS);
    return { poll, emails: statusEmails().filter((m) => !before.has(m.id)) };
  }

  /** Each company's employees of `refs` → the status email it must get: one, to its HR, with the count. */
  function expectOneEmailPerCompany(emails: ReturnType<typeof statusEmails>, refs: string[], pollDueAt: Date) {
    const expected = new Map<string, number>();
    for (const e of employees) if (refs.some((r) => r.endsWith(`:emp-${e.id}`))) expected.set(e.company_id, (expected.get(e.company_id) ?? 0) + 1);
    expect(emails.map((m) => companyOfKey(m.customArgs.idempotency_key!)).sort()).toEqual([...expected.keys()].sort());
    for (const m of emails) {
      const company = companyOfKey(m.customArgs.idempotency_key!);
      expect(m.customArgs.idempotency_key).toBe(`bank-status:${company}:${pollDueAt.toISOString()}`);
      expect(m.to).toEqual([hrOf.get(company)]);
      expect(m.subject).toMatch(new RegExp(`^${expected.get(company)} salaries credited`));
    }
  }

  const monthCredited = async (month: string) =>
    (
      await db.pool.query<{ employee_id: number }>(
        'select employee_id from salary_transfers where month = $1 and credited_at is not null order by employee_id',
        [month],
      )
    ).rows.map((r) => r.employee_id);

  beforeAll(async () => {
    db = await createTestDatabase('bank-poll');
    await seedDatabase(db.pool, { employees: 24, companies: 3, invalidRate: 0, seed: 11 });
    employees = (await db.pool.query<Employee>('select id, company_id, bank_account, salary from employees order by id')).rows;
    companies = [...new Set(employees.map((e) => e.company_id))];
    for (const r of (await db.pool.query<{ company_id: string; email: string }>(`select company_id, email from users where role = 'HR'`)).rows)
      hrOf.set(r.company_id, r.email);
    provider = await startProviderSimulator({ latencyMs: 20, latencySpreadMs: 10 });
    // Transfers stay pending until the test credits them.
    bank = await startBankSimulator({ creditDelayMs: 3_600_000 });
    jobs = createJobClient(db.pool, jobDefinitions);
    const env = {
      DATABASE_URL: db.url,
      SENDGRID_BASE_URL: provider.url,
      SENDGRID_API_KEY: 'SG.beton-dev',
      BANK_API_URL: bank.url,
      LOG_LEVEL: 'warn',
      RETRY_BASE_MS: '150',
      HEARTBEAT_MS: '1000',
      SCHEDULE_TICK_MS: '500',
      BANK_POLL_CRON: '*/2 * * * * *',
      DB_POOL_MAX: '5',
    };
    const workers = [
      spawnWorker({ name: 'scheduler-a', queue: 'maintenance', env }),
      spawnWorker({ name: 'scheduler-b', queue: 'maintenance', env }),
      spawnWorker({ name: 'email', queue: 'send-email', env }),
    ];
    await Promise.all(workers.map((w) => w.ready));
    // On start each scheduler looks back 5 minutes: wait until those polls (nothing credited yet) are done.
    await waitUntil(
      'the first polls',
      async () => {
        const { rows } = await db.pool.query<{ open: number; done: number }>(
          `select count(*) filter (where status <> 'done')::int as open, count(*) filter (where status = 'done')::int as done from jobs where task_name = 'poll-bank'`,
        );
        return rows[0]!.done > 0 && rows[0]!.open <= 1;
      },
      WAIT_MS,
    );
  }, 120_000);

  afterAll(async () => {
    await stopAll(10_000);
    await provider?.close();
    await bank?.close();
    await db?.drop();
  });

  it("the monthly run submits every employee's net pay to the bank once, under a reference naming the month", async () => {
    const lock = new PostgresLock(db.pool);
    expect((await runPayroll({ pool: db.pool, jobs, lock, by: 'test' }, MONTHS[0])).created).toBe(3);
    await waitUntil('transfers at the bank', async () => bank.transfers().length === employees.length, WAIT_MS);
    // A second run of the same month (another server, a retry by hand) submits nothing more.
    expect(await runPayroll({ pool: db.pool, jobs, lock, by: 'test-again' }, MONTHS[0])).toMatchObject({ created: 0, existing: 3 });
    await waitUntil(
      'submit jobs done',
      async () => (await db.pool.query(`select 1 from jobs where task_name = 'submit-bank-transfers' and status <> 'done'`)).rowCount === 0,
      WAIT_MS,
    );
    const atBank = bank.transfers().map((t) => ({ reference: t.reference, accountNumber: t.accountNumber, amount: t.amount }));
    expect(atBank.sort((a, b) => a.reference.localeCompare(b.reference))).toEqual(
      employees
        .map((e) => ({ reference: salaryTransferReference(MONTHS[0], e.id), accountNumber: e.bank_account, amount: netPay(e.salary).toFixed(2) }))
        .sort((a, b) => a.reference.localeCompare(b.reference)),
    );
    const submitJobs = await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs where task_name = 'submit-bank-transfers'`);
    expect(submitJobs.rows[0]!.n).toBe(3);
    expect(statusEmails()).toHaveLength(0); // nothing credited yet: no poll sent anything
  }, 60_000);

  it('two schedulers: one status email per company per poll window that found credits, none for a window without', async () => {
    const [c1, c2] = companies;
    const ofCompany = (c: string | undefined) => employees.filter((e) => e.company_id === c);
    const half = Math.ceil(ofCompany(c2).length / 2);
    const first = [...ofCompany(c1), ...ofCompany(c2).slice(0, half)].map((e) => salaryTransferReference(MONTHS[0], e.id));
    const w1 = await creditAndPoll(first);
    expectOneEmailPerCompany(w1.emails, first, w1.poll.due_at);

    // Polls that find nothing new send nothing.
    await waitUntil('two polls without changes', async () => (await polls()).filter((p) => p.due_at > w1.poll.due_at).length >= 2, 30_000);
    const quiet = (await polls()).filter((p) => p.due_at > w1.poll.due_at);
    expect(quiet.every((p) => p.credited === 0)).toBe(true);
    expect(statusEmails()).toHaveLength(w1.emails.length);

    // A later window with new credits: one more email for each company it touched.
    const second = employees.filter((e) => !first.includes(salaryTransferReference(MONTHS[0], e.id))).map((e) => salaryTransferReference(MONTHS[0], e.id));
    const w2 = await creditAndPoll(second);
    expectOneEmailPerCompany(w2.emails, second, w2.poll.due_at);
    expect(w2.poll.due_at > w1.poll.due_at).toBe(true);

    // Never two emails for one company and window; each company got one per window that touched it.
    const perKey = new Map<string, number>();
    for (const m of statusEmails()) perKey.set(m.customArgs.idempotency_key!, (perKey.get(m.customArgs.idempotency_key!) ?? 0) + 1);
    expect([...perKey.values()].every((n) => n === 1)).toBe(true);
    expect(perKey.size).toBe(w1.emails.length + w2.emails.length);
    expect(await monthCredited(MONTHS[0])).toEqual(employees.map((e) => e.id));

    // Both scheduler processes enqueued and ran polls: the single email came from two racing schedulers.
    const pollWorkers = await db.pool.query<{ worker_id: string }>(
      `select distinct a.worker_id from job_attempts a join jobs j on j.id = a.job_id where j.task_name = 'poll-bank'`,
    );
    expect(pollWorkers.rows.length).toBe(2);
  }, 120_000);

  it("the next month's credits are marked for that month and reported again", async () => {
    const before = statusEmails().length;
    expect((await runPayroll({ pool: db.pool, jobs, lock: new PostgresLock(db.pool), by: 'test' }, MONTHS[1])).created).toBe(3);
    await waitUntil("next month's transfers at the bank", async () => bank.transfers().length === 2 * employees.length, WAIT_MS);
    const refs = employees.map((e) => salaryTransferReference(MONTHS[1], e.id));
    const w = await creditAndPoll(refs);
    expectOneEmailPerCompany(w.emails, refs, w.poll.due_at);
    expect(statusEmails()).toHaveLength(before + companies.length);
    expect(await monthCredited(MONTHS[1])).toEqual(employees.map((e) => e.id));
  }, 90_000);
});

describe('bank transfers and poll in one process: a cut-off attempt, an unpayable salary, two polls of one window', () => {
  let db: TestDatabase;
  let bank: BankSimulator;
  let jobs: JobClient<BetonJobs>;
  let employees: Employee[];
  let companies: string[];
  const MONTH = '2026-09';

  beforeAll(async () => {
    db = await createTestDatabase('bank-faults');
    await seedDatabase(db.pool, { employees: 12, companies: 2, invalidRate: 0, seed: 5 });
    employees = (await db.pool.query<Employee>('select id, company_id, bank_account, salary from employees order by id')).rows;
    companies = [...new Set(employees.map((e) => e.company_id))];
    bank = await startBankSimulator({ creditDelayMs: 3_600_000 });
    jobs = createJobClient(db.pool, jobDefinitions);
  });

  afterAll(async () => {
    await bank?.close();
    await db?.drop();
  });

  const client = () => createBankClient({ baseUrl: bank.url, apiKey: 'bank-dev-key' });
  const ofCompany = (c: string) => employees.filter((e) => e.company_id === c);
  const atBank = (c: string) => bank.transfers().filter((t) => ofCompany(c).some((e) => t.reference === salaryTransferReference(MONTH, e.id)));

  it('an attempt cut off between the bank request and the mark sends the same transfers again: duplicates at the bank, nobody paid twice', async () => {
    const c = companies[0]!;
    const first = await submitSalaryTransfers({ pool: db.pool, bank: client() }, { companyId: c, month: MONTH });
    expect(first).toEqual({ transfers: ofCompany(c).length, submitted: ofCompany(c).length, duplicates: 0 });
    await db.pool.query('update salary_transfers set submitted_at = null where company_id = $1', [c]); // the mark never happened
    const again = await submitSalaryTransfers({ pool: db.pool, bank: client() }, { companyId: c, month: MONTH });
    expect(again).toEqual({ transfers: ofCompany(c).length, submitted: ofCompany(c).length, duplicates: ofCompany(c).length });
    expect(atBank(c)).toHaveLength(ofCompany(c).length);
  });

  it("an unpayable salary does not hold the company's other salaries back: they go, the job fails naming it, the retry after the fix sends only it", async () => {
    const c = companies[1]!;
    const bad = ofCompany(c)[2]!;
    await db.pool.query(`update employees set salary = salary - 'basic' where id = $1`, [bad.id]);
    const error = await submitSalaryTransfers({ pool: db.pool, bank: client() }, { companyId: c, month: MONTH }).catch((e) => e);
    expect(error).toMatchObject({ name: 'PermanentError', code: 'salary_invalid' });
    expect(error.message).toContain(`employee ${bad.id}: salary has a missing or non-numeric component`);
    expect(
      atBank(c)
        .map((t) => t.reference)
        .sort(),
    ).toEqual(
      ofCompany(c)
        .filter((e) => e.id !== bad.id)
        .map((e) => salaryTransferReference(MONTH, e.id))
        .sort(),
    );
    await db.pool.query(`update employees set salary = $2 where id = $1`, [bad.id, JSON.stringify(bad.salary)]);
    const retried = await submitSalaryTransfers({ pool: db.pool, bank: client() }, { companyId: c, month: MONTH });
    expect(retried).toEqual({ transfers: ofCompany(c).length, submitted: 1, duplicates: 0 });
    expect(atBank(c)).toHaveLength(ofCompany(c).length);
    expect(atBank(c).find((t) => t.reference === salaryTransferReference(MONTH, bad.id))!.amount).toBe(netPay(bad.salary).toFixed(2));
  });

  it('two polls of the same window at once: one polls, the other is refused by the lock or finds it done; one status email job per company', async () => {
    expect(bank.creditAll()).toBe(employees.length);
    const poll = (by: string) => pollBankCredits({ pool: db.pool, bank: client(), jobs, lock: new PostgresLock(db.pool), by }, '2026-10-01T03:15:00.000Z');
    const results = await Promise.all([poll('server-a'), poll('server-b')]);
    expect(results.filter((r) => r.status === 'polled')).toEqual([{ status: 'polled', credited: employees.length, companies: 2 }]);
    expect(results.filter((r) => r.status !== 'polled').map((r) => r.status)).toEqual([expect.stringMatching(/^(locked|done-before)$/)]);
    expect(await poll('server-c')).toEqual({ status: 'done-before', credited: 0, companies: 0 });
    const emails = await db.pool.query<{ company_id: string; idempotency_key: string }>(
      `select company_id, idempotency_key from jobs where task_name = 'send-bank-status-email' order by company_id`,
    );
    expect(emails.rows.map((r) => r.company_id)).toEqual([...companies].sort());
  });

  it("a window longer than the bank's page: every page marked in one transaction; a page that fails leaves nothing marked, and the next poll marks it all", async () => {
    // The window of the test above listed again from the start (its transfers unmarked, no poll on record).
    const again = async () => {
      await db.pool.query(`update salary_transfers set credited_at = null where month = $1`, [MONTH]);
      await db.pool.query('delete from bank_polls');
    };
    const emailsOf = async (window: string) =>
      (
        await db.pool.query<{ payload: { companyId: string; credited: number } }>(
          `select payload from jobs where task_name = 'send-bank-status-email' and payload->>'pollWindow' = $1`,
          [window],
        )
      ).rows.map((r) => [r.payload.companyId, r.payload.credited]);
    const perCompany = companies.map((c) => [c, ofCompany(c).length]).sort();
    const paged = createBankClient({ baseUrl: bank.url, apiKey: 'bank-dev-key', pageSize: 5 }); // 12 credits: pages of 5, 5, 2
    const deps = { pool: db.pool, jobs, lock: new PostgresLock(db.pool), by: 'server-a' };

    await again();
    // The second page is refused (the bank answers 503 from then on): the poll fails whole.
    let pages = 0;
    const failing: BankClient = {
      submit: (t, s) => paged.submit(t, s),
      credits: async (request, signal) => {
        if (++pages === 2) bank.unavailableFor(60_000);
        return paged.credits(request, signal);
      },
    };
    await expect(pollBankCredits({ ...deps, bank: failing }, '2026-10-01T03:30:00.000Z')).rejects.toThrow(/503/);
    expect(pages).toBe(2);
    expect((await db.pool.query(`select count(*)::int as n from salary_transfers where month = $1 and credited_at is not null`, [MONTH])).rows[0].n).toBe(0);
    expect((await db.pool.query('select count(*)::int as n from bank_polls')).rows[0].n).toBe(0);
    expect(await emailsOf('2026-10-01T03:30:00.000Z')).toEqual([]);

    bank.unavailableFor(0);
    expect(await pollBankCredits({ ...deps, bank: paged }, '2026-10-01T03:30:00.000Z')).toEqual({ status: 'polled', credited: employees.length, companies: 2 });
    expect((await db.pool.query(`select count(*)::int as n from salary_transfers where month = $1 and credited_at is not null`, [MONTH])).rows[0].n).toBe(
      employees.length,
    );
    expect((await emailsOf('2026-10-01T03:30:00.000Z')).sort()).toEqual(perCompany);
  });
});
