import { ASYNC_COMMIT, prepared, type Pool, type PoolClient } from '@beton/db';
import { PermanentError } from '@beton/jobs/client';
import type { SlipData } from '@beton/pdf';
import { salaryInMonthSql } from '@beton/people/salary';
import { createHash } from 'node:crypto';
import type { PayrollJobClient } from './jobs/index.ts';
import { requireSlipPassword, SLIP_PASSWORD_SQL, type SlipPasswordSource } from './slip-password.ts';

import type { Salary } from '@beton/people/validation';

export type { Salary };

/** A month's earnings and deductions, as the slip prints them. */
export function salaryLines(s: Salary) {
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

type LoadedSlipData = SlipData & {
  companyId: string;
  replyTo: string | null;
  protectSlips: boolean;
  password: string | null;
  passwordSource: SlipPasswordSource;
};

/** A slip stored by its render job (the email attaches it). */
interface StoredSlip {
  pdf: Buffer;
  encrypted: boolean;
}

/**
 * The employee's row with the salary in force in `$2` (packages/people), and — with `withSlip`
 * — the slip stored under the key `$3` (null columns when there is none): the email's one read
 * instead of two. One text per variant, each prepared once per connection (@beton/db
 * prepared): every render and every email runs one of them.
 */
const slipDataSql = (withSlip: boolean) =>
  `select e.company_id, c.name as company, c.reply_to_email as reply_to, c.protect_slips, ${SLIP_PASSWORD_SQL} as password, c.slip_password as password_source,
          e.code, e.name_latin, e.name_bengali, e.email, e.bank_account,
          ${salaryInMonthSql('e', '$2')} as salary${withSlip ? ', s.pdf, s.encrypted' : ''}
   from employees e join companies c on c.id = e.company_id${withSlip ? ' left join slips s on s.key = $3' : ''} where e.id = $1`;
const SLIP_DATA = slipDataSql(false);
const SLIP_DATA_WITH_SLIP = slipDataSql(true);

interface SlipDataRow {
  company_id: string;
  company: string;
  reply_to: string | null;
  protect_slips: boolean;
  password: string | null;
  password_source: SlipPasswordSource;
  code: string;
  name_latin: string;
  name_bengali: string;
  email: string;
  bank_account: string;
  salary: Salary;
  pdf?: Buffer | null;
  encrypted?: boolean | null;
}

function slipDataOf(e: SlipDataRow | undefined, employeeId: number, month: string): LoadedSlipData {
  if (!e) throw new PermanentError('employee_not_found', `Employee ${employeeId} does not exist (deleted after the job was queued?)`);
  const { earnings, deductions } = salaryLines(e.salary);
  return {
    companyId: e.company_id,
    replyTo: e.reply_to,
    protectSlips: e.protect_slips,
    password: e.password,
    passwordSource: e.password_source,
    company: { name: e.company },
    employee: { code: e.code, nameLatin: e.name_latin, nameBengali: e.name_bengali, email: e.email, bankAccount: e.bank_account },
    month,
    earnings,
    deductions,
    netPay: netPay(e.salary),
  };
}

/** What a slip of `month` prints: the employee row and the salary components in force that month (packages/people). */
export async function loadSlipData(db: Pool | PoolClient, employeeId: number, month: string): Promise<LoadedSlipData> {
  const { rows } = await db.query<SlipDataRow>({ ...prepared(SLIP_DATA), values: [employeeId, month] });
  return slipDataOf(rows[0], employeeId, month);
}

/**
 * What a slip's email needs, in one round trip: what {@link loadSlipData} reads, and the slip
 * stored under `key` (null: none stored).
 */
export async function loadSlipToSend(
  db: Pool | PoolClient,
  employeeId: number,
  month: string,
  key: string,
): Promise<{ data: LoadedSlipData; stored: StoredSlip | null }> {
  const { rows } = await db.query<SlipDataRow>({ ...prepared(SLIP_DATA_WITH_SLIP), values: [employeeId, month, key] });
  const data = slipDataOf(rows[0], employeeId, month);
  const { pdf, encrypted } = rows[0]!;
  return { data, stored: pdf ? { pdf, encrypted: encrypted === true } : null };
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
  deps: { pool: Pool; jobs: PayrollJobClient; render: (data: SlipData, options: { password?: string }) => Promise<Uint8Array> },
  payload: RenderSlipPayload,
  key: string,
  options: { jobId?: number } = {},
): Promise<{ bytes: number; sha256: string; encrypted: boolean }> {
  const {
    companyId: _ignored,
    replyTo: _replyTo,
    protectSlips,
    password,
    passwordSource,
    ...data
  } = await loadSlipData(deps.pool, payload.employeeId, payload.month);
  // A protected slip is encrypted after rendering, in the same render thread (slip-password.ts);
  // without its password the job fails, classified, before anything is rendered or sent.
  const pdf = await deps.render(data, protectSlips ? { password: requireSlipPassword({ code: data.employee.code, password, source: passwordSource }) } : {});
  const sha256 = createHash('sha256').update(pdf).digest('hex');
  // The slip stored and its email enqueued in ONE statement (issue 23: one round trip, was two):
  // the email job exists exactly when its slip is stored. The email keeps the render job's
  // place in the queue, its priority read in the same statement. A crash before it commits
  // leaves neither; the render job is then not done and its next attempt does both (same keys).
  // Committed asynchronously (@beton/db ASYNC_COMMIT): lost in a server crash, it is that crash
  // before the commit (the render job's finish, after it, is lost with it).
  await deps.jobs.enqueue('send-slip-email', payload, {
    alongside: {
      sql: `insert into slips (employee_id, month, key, pdf, sha256, bytes, encrypted) select $1, $2, $3, $4, $5, $6, $7 from ${ASYNC_COMMIT}
            on conflict (key) do update set pdf = excluded.pdf, sha256 = excluded.sha256, bytes = excluded.bytes, encrypted = excluded.encrypted, created_at = now()`,
      params: [payload.employeeId, payload.month, key, Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength), sha256, pdf.byteLength, protectSlips],
    },
    ...(options.jobId === undefined ? {} : { priorityOf: options.jobId }),
  });
  return { bytes: pdf.byteLength, sha256, encrypted: protectSlips };
}
