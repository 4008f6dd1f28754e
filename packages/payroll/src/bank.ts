import type { Pool } from '@beton/db';
import { errorFromHttpStatus, inTransaction, type BetonJobs, type JobClient, type LockService } from '@beton/jobs';

export interface BankClient {
  credits(since: Date | null, signal?: AbortSignal): Promise<{ credits: Array<{ reference: string; accountNumber: string; amount: number; creditedAt: string }>; asOf: string }>;
}

export function createBankClient(options: { baseUrl: string; apiKey: string }): BankClient {
  return {
    async credits(since, signal) {
      const url = new URL('/v1/credits', options.baseUrl);
      if (since) url.searchParams.set('since', since.toISOString());
      const res = await fetch(url, { headers: { Authorization: `Bearer ${options.apiKey}` }, ...(signal ? { signal } : {}) });
      if (!res.ok) throw errorFromHttpStatus(res.status, `bank answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as Awaited<ReturnType<BankClient['credits']>>;
    },
  };
}

export interface BankPollDeps {
  pool: Pool;
  bank: BankClient;
  jobs: JobClient<BetonJobs>;
  lock: LockService;
  by: string;
}

/**
 * The 15-minute bank poll (R1 recurring, R11): marks credited salaries and sends each
 * company's HR one status email per poll that found changes — never two, even with two
 * schedulers: the poll takes a lock per due time and the email's key is per company and
 * poll window.
 */
export async function pollBankCredits(deps: BankPollDeps, dueAt: string, signal?: AbortSignal): Promise<{ status: 'polled' | 'locked' | 'done-before'; credited: number; companies: number }> {
  const key = `lock:bank-poll:${dueAt}`;
  if (!(await deps.lock.tryAcquire(key, deps.by, 10 * 60_000))) return { status: 'locked', credited: 0, companies: 0 };
  try {
    const already = await deps.pool.query('select 1 from bank_polls where due_at = $1', [dueAt]);
    if (already.rowCount) return { status: 'done-before', credited: 0, companies: 0 };
    const last = await deps.pool.query<{ as_of: Date }>('select as_of from bank_polls order by due_at desc limit 1');
    const { credits, asOf } = await deps.bank.credits(last.rows[0]?.as_of ?? null, signal);
    return await inTransaction(deps.pool, undefined, async (client) => {
      const updated = await client.query<{ company_id: string; n: number }>(
        `with c as (select * from unnest($1::text[], $2::timestamptz[]) as t(account, credited_at))
         , u as (update employees e set salary_credited_at = c.credited_at from c
                 where e.bank_account = c.account and e.salary_credited_at is null returning e.company_id)
         select company_id, count(*)::int as n from u group by company_id`,
        [credits.map((c) => c.accountNumber), credits.map((c) => c.creditedAt)],
      );
      for (const row of updated.rows) {
        await deps.jobs.enqueue('send-bank-status-email', { companyId: row.company_id, pollWindow: dueAt, credited: row.n }, { client });
      }
      const credited = updated.rows.reduce((a, r) => a + r.n, 0);
      await client.query('insert into bank_polls (due_at, as_of, credited) values ($1, $2, $3)', [dueAt, asOf, credited]);
      return { status: 'polled' as const, credited, companies: updated.rowCount ?? 0 };
    });
  } finally {
    await deps.lock.release(key, deps.by).catch(() => {});
  }
}
