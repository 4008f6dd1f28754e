import { inTransaction, type Pool } from '@beton/db';
import { errorFromHttpStatus, PermanentError, type LockService } from '@beton/jobs/client';
import type { PayrollJobClient } from './jobs/index.ts';
import { salariesOfMonth } from '@beton/people/salary';
import { assertMonth } from './month.ts';
import { netPay, type Salary } from './slip.ts';

/** A salary transfer as the bank takes it; `amount` in taka, two decimals ("52000.00"). */
export interface BankTransfer {
  reference: string;
  accountNumber: string;
  amount: string;
}

export interface BankCredit {
  reference: string;
  accountNumber: string;
  amount: number | string;
  creditedAt: string;
}

export interface BankClient {
  /** Registers transfers; the bank dedupes by reference (the same one again is a duplicate, not a second payment). */
  submit(transfers: BankTransfer[], signal?: AbortSignal): Promise<{ transfers: Array<{ reference: string; duplicate: boolean }> }>;
  /** Credits since `since` (inclusive), and the bank's clock `asOf`: the next poll's `since`. */
  credits(since: Date | null, signal?: AbortSignal): Promise<{ credits: BankCredit[]; asOf: string }>;
}

export function createBankClient(options: { baseUrl: string; apiKey: string }): BankClient {
  const call = async <T>(path: string, init: RequestInit, signal?: AbortSignal): Promise<T> => {
    const res = await fetch(new URL(path, options.baseUrl), {
      ...init,
      headers: { Authorization: `Bearer ${options.apiKey}`, 'Content-Type': 'application/json' },
      ...(signal ? { signal } : {}),
    });
    if (!res.ok) throw errorFromHttpStatus(res.status, `bank answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    submit: (transfers, signal) => call('/v1/transfers', { method: 'POST', body: JSON.stringify({ transfers }) }, signal),
    credits(since, signal) {
      return call(`/v1/credits${since ? `?since=${encodeURIComponent(since.toISOString())}` : ''}`, { method: 'GET' }, signal);
    },
  };
}

/** The bank reference of one employee's salary of one month: `salary:2026-11:emp-48213`. */
export function salaryTransferReference(month: string, employeeId: number): string {
  return `salary:${month}:emp-${employeeId}`;
}

/** Transfers per request to the bank. */
const SUBMIT_BATCH = 5_000;

/** An employee's net pay in taka as the bank takes it, or why it cannot be paid. */
function transferAmount(salary: Salary): { amount: string } | { problem: string } {
  let net: number;
  try {
    net = netPay(salary);
  } catch (e) {
    return { problem: `salary unreadable (${(e as Error).message})` };
  }
  if (!Number.isFinite(net)) return { problem: 'salary has a missing or non-numeric component' };
  // No figure in the message: it reaches the admins' failed-jobs page, and salaries are HR's.
  if (net <= 0) return { problem: 'net pay is not positive' };
  return { amount: net.toFixed(2) };
}

/**
 * The submit-bank-transfers job: one company's salaries of `month` as bank transfers. The
 * rows (one per employee and month, net pay from the employee's salary when the job runs)
 * are written once; those the bank has not accepted yet are sent in batches and marked
 * submitted. The bank dedupes by reference, so an attempt cut off between its request and
 * the mark sends the same transfers again and nothing is paid twice. An employee whose
 * salary cannot be paid (unreadable, non-numeric, not positive) does not hold the others
 * back: everyone else is submitted, then the job fails permanently naming them, and a retry
 * after the fix submits only them.
 */
export async function submitSalaryTransfers(
  deps: { pool: Pool; bank: BankClient },
  payload: { companyId: string; month: string },
  signal?: AbortSignal,
): Promise<{ transfers: number; submitted: number; duplicates: number }> {
  const { pool, bank } = deps;
  const month = assertMonth(payload.month);
  // Everyone paid in the month, with that month's salary (packages/people).
  const employees = { rows: await salariesOfMonth(pool, payload.companyId, month) };
  const amounts = employees.rows.map((e) => ({ e, ...transferAmount(e.salary) }));
  const payable = amounts.flatMap((a) => ('amount' in a ? [{ ...a.e, amount: a.amount }] : []));
  const unpayable = amounts.flatMap((a) => ('problem' in a ? [`employee ${a.e.id}: ${a.problem}`] : []));
  await pool.query(
    `insert into salary_transfers (employee_id, month, company_id, reference, bank_account, amount)
     select t.id, $1, $2, t.reference, t.account, t.amount from unnest($3::int[], $4::text[], $5::text[], $6::numeric[]) as t(id, reference, account, amount)
     on conflict do nothing`,
    [
      month,
      payload.companyId,
      payable.map((e) => e.id),
      payable.map((e) => salaryTransferReference(month, e.id)),
      payable.map((e) => e.bank_account),
      payable.map((e) => e.amount),
    ],
  );
  let submitted = 0;
  let duplicates = 0;
  for (;;) {
    const batch = await pool.query<BankTransfer>(
      `select reference, bank_account as "accountNumber", amount::text as amount from salary_transfers
       where company_id = $1 and month = $2 and submitted_at is null order by reference limit $3`,
      [payload.companyId, month, SUBMIT_BATCH],
    );
    if (!batch.rowCount) break;
    const answer = await bank.submit(batch.rows, signal);
    duplicates += answer.transfers.filter((t) => t.duplicate).length;
    await pool.query('update salary_transfers set submitted_at = now() where reference = any($1::text[]) and submitted_at is null', [
      batch.rows.map((t) => t.reference),
    ]);
    submitted += batch.rows.length;
  }
  if (unpayable.length) {
    throw new PermanentError(
      'salary_invalid',
      `${unpayable.length} of ${employees.rows.length} salaries of ${month} not submitted (the others were): ${unpayable.slice(0, 20).join('; ')}${unpayable.length > 20 ? '; …' : ''}`,
    );
  }
  return { transfers: employees.rows.length, submitted, duplicates };
}

export interface BankPollDeps {
  pool: Pool;
  bank: BankClient;
  jobs: PayrollJobClient;
  lock: LockService;
  by: string;
}

/**
 * The 15-minute bank poll (R1 recurring, R11): marks each credited transfer's month credited
 * (matched by its reference, so every month is marked on its own) and sends each company's
 * HR one status email per poll that found changes — never two, even with two schedulers:
 * the poll takes a lock per due time, records the due time once, and the email's key is per
 * company and poll window.
 */
export async function pollBankCredits(
  deps: BankPollDeps,
  dueAt: string,
  signal?: AbortSignal,
): Promise<{ status: 'polled' | 'locked' | 'done-before'; credited: number; companies: number }> {
  const key = `lock:bank-poll:${dueAt}`;
  if (!(await deps.lock.tryAcquire(key, deps.by, 10 * 60_000))) return { status: 'locked', credited: 0, companies: 0 };
  try {
    const already = await deps.pool.query('select 1 from bank_polls where due_at = $1', [dueAt]);
    if (already.rowCount) return { status: 'done-before', credited: 0, companies: 0 };
    const last = await deps.pool.query<{ as_of: Date }>('select as_of from bank_polls order by due_at desc limit 1');
    const { credits, asOf } = await deps.bank.credits(last.rows[0]?.as_of ?? null, signal);
    return await inTransaction(deps.pool, undefined, async (client) => {
      // Polls of different windows mark one after the other (a late one overlapping the next
      // would otherwise lock the same rows in another order). `since` is inclusive: a credit
      // the previous poll saw comes again and is skipped by `credited_at is null`.
      await client.query(`select pg_advisory_xact_lock(hashtext('beton:bank-poll'))`);
      const updated = await client.query<{ company_id: string; n: number }>(
        `with c as (select * from unnest($1::text[], $2::timestamptz[]) as t(reference, credited_at))
         , u as (update salary_transfers s set credited_at = c.credited_at from c
                 where s.reference = c.reference and s.credited_at is null returning s.company_id)
         select company_id, count(*)::int as n from u group by company_id order by company_id`,
        [credits.map((c) => c.reference), credits.map((c) => c.creditedAt)],
      );
      // Every company's status email in one statement (one enqueue per company was 600 round
      // trips in a window at 600 companies: bench:scale).
      if (updated.rows.length) {
        await deps.jobs.enqueueMany(
          'send-bank-status-email',
          updated.rows.map((row) => ({ payload: { companyId: row.company_id, pollWindow: dueAt, credited: row.n } })),
          { client },
        );
      }
      const credited = updated.rows.reduce((a, r) => a + r.n, 0);
      await client.query('insert into bank_polls (due_at, as_of, credited) values ($1, $2, $3)', [dueAt, asOf, credited]);
      return { status: 'polled' as const, credited, companies: updated.rowCount ?? 0 };
    });
  } finally {
    await deps.lock.release(key, deps.by).catch(() => {});
  }
}
