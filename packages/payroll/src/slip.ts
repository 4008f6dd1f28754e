import type { Pool, PoolClient } from '@beton/db';
import type { BetonJobs, JobClient } from '@beton/jobs';
import { PermanentError } from '@beton/jobs';
import type { SlipData } from '@beton/pdf';
import { createHash } from 'node:crypto';

export interface Salary {
  basic: number;
  houseRent: number;
  medical: number;
  conveyance: number;
  tax: number;
  providentFund: number;
}

/** A month's earnings and deductions, as the slip prints them. */
function salaryLines(s: Salary) {
  return {
    earnings: [
      { labelEn: 'Basic salary', labelBn: 'মূল বেতন', amount: s.basic },
      { labelEn: 'House rent', labelBn: 'বাড়ি ভাড়া', amount: s.houseRent },
      { labelEn: 'Medical allowance', labelBn: 'চিকিৎসা ভাতা', amount: s.medical },
      { labelEn: 'Conveyance', labelBn: 'যাতায়াত ভাতা', amount: s.conveyance },
    ],
    deductions: [
      { labelEn: 'Income tax', labelBn: 'আয়কর', amount: s.tax },
      { labelEn: 'Provident fund', labelBn: 'ভবিষ্য তহবিল', amount: s.providentFund },
    ],
  };
}

/** Net pay in taka: what the slip shows and what the bank transfers. */
export function netPay(salary: Salary): number {
  const { earnings, deductions } = salaryLines(salary);
  const sum = (lines: { amount: number }[]) => lines.reduce((a, l) => a + l.amount, 0);
  return sum(earnings) - sum(deductions);
}

/** What a slip prints, from the employee row and their salary components. */
export async function loadSlipData(db: Pool | PoolClient, employeeId: number, month: string): Promise<SlipData & { companyId: string; replyTo: string | null }> {
  const { rows } = await db.query<{ company_id: string; company: string; reply_to: string | null; code: string; name_latin: string; name_bengali: string; email: string; bank_account: string; salary: Salary }>(
    `select e.company_id, c.name as company, c.reply_to_email as reply_to, e.code, e.name_latin, e.name_bengali, e.email, e.bank_account, e.salary
     from employees e join companies c on c.id = e.company_id where e.id = $1`,
    [employeeId],
  );
  const e = rows[0];
  if (!e) throw new PermanentError('employee_not_found', `Employee ${employeeId} does not exist (deleted after the job was queued?)`);
  const { earnings, deductions } = salaryLines(e.salary);
  return {
    companyId: e.company_id,
    replyTo: e.reply_to,
    company: { name: e.company },
    employee: { code: e.code, nameLatin: e.name_latin, nameBengali: e.name_bengali, email: e.email, bankAccount: e.bank_account },
    month,
    earnings,
    deductions,
    netPay: netPay(e.salary),
  };
}

export interface RenderSlipPayload {
  companyId: string;
  employeeId: number;
  month: string;
  payrollRunId?: string | undefined;
  resend?: number | undefined;
  copy?: true | undefined;
}

/**
 * The render-slip job: load the data, render the PDF (in the worker's thread pool, via
 * `render`), then store the PDF with its checksum and enqueue the email. The email keeps the
 * render job's place in the queue (`jobId`: its priority now — HR may have moved the slip
 * ahead while it rendered).
 */
export async function renderSlipAndQueueEmail(
  deps: { pool: Pool; jobs: JobClient<BetonJobs>; render: (data: SlipData) => Promise<Uint8Array> },
  payload: RenderSlipPayload,
  key: string,
  options: { jobId?: number } = {},
): Promise<{ bytes: number; sha256: string }> {
  const { companyId: _ignored, replyTo: _replyTo, ...data } = await loadSlipData(deps.pool, payload.employeeId, payload.month);
  const pdf = await deps.render(data);
  const sha256 = createHash('sha256').update(pdf).digest('hex');
  // Two statements, in this order, each atomic on its own: the email job exists only once its
  // slip is stored. A crash between them leaves a stored slip and no email job; the render job
  // is then not done, and its next attempt stores the slip again (same key) and enqueues.
  // The job's priority now is read in the same round trip as the slip's insert (one statement
  // fewer per slip; issue 23).
  const { rows } = await deps.pool.query<{ priority: number }>(
    `with stored as (
       insert into slips (employee_id, month, key, pdf, sha256, bytes) values ($1, $2, $3, $4, $5, $6)
       on conflict (key) do update set pdf = excluded.pdf, sha256 = excluded.sha256, bytes = excluded.bytes, created_at = now())
     select priority from jobs where id = $7`,
    [payload.employeeId, payload.month, key, Buffer.from(pdf), sha256, pdf.byteLength, options.jobId ?? null],
  );
  const priority = options.jobId === undefined ? undefined : rows[0]?.priority;
  await deps.jobs.enqueue('send-slip-email', payload, priority === undefined ? {} : { priority });
  return { bytes: pdf.byteLength, sha256 };
}
