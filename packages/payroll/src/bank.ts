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
  /**
   * One page of the credits since `since` (inclusive) up to the bank's clock `asOf` (the next
   * poll's `since`, the same on every page of a listing), or the page `cursor` (a previous
   * page's `nextCursor`) points to. `nextCursor` is null on the listing's last page.
   */
  credits(request: { since: Date | null } | { cursor: string }, signal?: AbortSignal): Promise<BankCreditsPage>;
}

export interface BankCreditsPage {
  credits: BankCredit[];
  asOf: string;
  nextCursor: string | null;
}

/** Credits asked for per page: the most the bank's listing gives (GET /v1/credits `limit`). */
export const BANK_CREDITS_PAGE = 10_000;

/** `pageSize`: credits asked for per page (default BANK_CREDITS_PAGE; tests use small pages). */
export function createBankClient(options: { baseUrl: string; apiKey: string; pageSize?: number }): BankClient {
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
    async credits(request, signal) {
      const query = new URLSearchParams({ limit: String(options.pageSize ?? BANK_CREDITS_PAGE) });
      if ('cursor' in request) query.set('cursor', request.cursor);
      else if (request.since) query.set('since', request.since.toISOString());
      const page = await call<{ credits: BankCredit[]; asOf: string; hasMore?: boolean; nextCursor?: string | null }>(
        `/v1/credits?${query}`,
        { method: 'GET' },
        signal,
      );
      if (page.hasMore && !page.nextCursor) throw new Error('the bank said more credits wait but gave no cursor to them');
      return { credits: page.credits, asOf: page.asOf, nextCursor: page.hasMore ? page.nextCursor! : null };
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
 *
 * The bank lists credits in pages (BANK_CREDITS_PAGE): every page of the window is marked in
 * the poll's one transaction, the next page fetched while the database marks the current one
 * (a window of 125,000 credits at 500,000 employees: the bank's answer and the marking overlap
 * instead of adding up). A page that fails fails the poll whole: nothing is recorded, and the
 * next poll lists the window again from the last recorded `asOf`.
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
    let page = await deps.bank.credits({ since: last.rows[0]?.as_of ?? null }, signal);
    const asOf = page.asOf;
    return await inTransaction(deps.pool, undefined, async (client) => {
      // Polls of different windows mark one after the other (a late one overlapping the next
      // would otherwise lock the same rows in another order). `since` is inclusive: a credit
      // the previous poll saw comes again and is skipped by `credited_at is null`.
      await client.query(`select pg_advisory_xact_lock(hashtext('beton:bank-poll'))`);
      // Each page is up to 10,000 references against every transfer of the months in flight: read
      // through the reference index. Costed for a spinning disk (random_page_cost 4), PostgreSQL
      // planned a hash join over a scan of the whole table (EXPLAIN at 200,000); a window of
      // 125,000 credits over 500,000 transfers took 2.7–3.0 s paged that way, 1.05–1.21 s with this.
      await client.query('set local random_page_cost = 1.1');
      const byCompany = new Map<string, number>();
      for (let pages = 1; ; pages++) {
        const cursor = page.nextCursor;
        // The next page is on its way while this one is marked (a failure surfaces at its await).
        const next = cursor === null ? null : deps.bank.credits({ cursor }, signal);
        next?.catch(() => {});
        const updated = await client.query<{ company_id: string; n: number }>(
          `with c as (select * from unnest($1::text[], $2::timestamptz[]) as t(reference, credited_at))
           , u as (update salary_transfers s set credited_at = c.credited_at from c
                   where s.reference = c.reference and s.credited_at is null returning s.company_id)
           select company_id, count(*)::int as n from u group by company_id`,
          [page.credits.map((c) => c.reference), page.credits.map((c) => c.creditedAt)],
        );
        for (const row of updated.rows) byCompany.set(row.company_id, (byCompany.get(row.company_id) ?? 0) + row.n);
        if (next === null) break;
        page = await next;
        if (page.nextCursor === cursor) throw new Error(`the bank's credits listing did not move on after page ${pages} (the same cursor again)`);
      }
      // Every company's status email in one statement (one enqueue per company was 600 round
      // trips in a window at 600 companies: bench:scale).
      const companies = [...byCompany].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      if (companies.length) {
        await deps.jobs.enqueueMany(
          'send-bank-status-email',
          companies.map(([companyId, credited]) => ({ payload: { companyId, pollWindow: dueAt, credited } })),
          { client },
        );
      }
      const credited = companies.reduce((a, [, n]) => a + n, 0);
      await client.query('insert into bank_polls (due_at, as_of, credited) values ($1, $2, $3)', [dueAt, asOf, credited]);
      return { status: 'polled' as const, credited, companies: companies.length };
    });
  } finally {
    await deps.lock.release(key, deps.by).catch(() => {});
  }
}
