/**
 * A month's employees as the register and the ZIP see them, read in keyset batches (by code),
 * so an export of 50,000 employees never holds more than one batch.
 *
 * An employee belongs to the month when it has a slip of the month, a salary transfer of the
 * month or a render job of the month (jobs and delivery records are purged after 13 months,
 * slips kept 7 years: an old month's slips still count).
 */
import { renderSlipJob } from '@beton/payroll/jobs';
import { netPay, salaryLines, type Salary } from '@beton/payroll/slip';
import { LATEST_SLIP_JOB, SLIP_STATUS_SQL, type SlipStatus } from '../employees.ts';
import type { Pool } from '../types.ts';

/** A salary's way to the bank: none (no transfer of the month) → pending → submitted (the bank accepted it) → credited. */
export const TRANSFER_STATUSES = ['none', 'pending', 'submitted', 'credited'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

export const TRANSFER_STATUS_SQL = `case when t.credited_at is not null then 'credited' when t.submitted_at is not null then 'submitted'
                                        when t.employee_id is not null then 'pending' else 'none' end`;

/** `e` is an employee of the month $2. */
export const IN_MONTH_SQL = `(exists (select 1 from slips sl where sl.employee_id = e.id and sl.month = $2)
  or exists (select 1 from salary_transfers st where st.employee_id = e.id and st.month = $2)
  or exists (select 1 from jobs j where j.employee_id = e.id and j.task_name = '${renderSlipJob.name}' and j.payload->>'month' = $2))`;

export interface RegisterRow {
  id: number;
  code: string;
  nameLatin: string;
  nameBengali: string;
  basic: number;
  houseRent: number;
  medical: number;
  conveyance: number;
  gross: number;
  tax: number;
  providentFund: number;
  deductions: number;
  net: number;
  slipStatus: SlipStatus;
  /** The month's stored slip (the newest attempt's, not an extra copy); null when none is stored. */
  slipId: number | null;
  transferStatus: TransferStatus;
  /** The amount sent to the bank (taka); null without a transfer. */
  transferAmount: number | null;
  creditedAt: Date | null;
}

type Row = {
  id: number;
  code: string;
  name_latin: string;
  name_bengali: string;
  salary: Salary;
  slip_status: SlipStatus;
  slip_id: string | null;
  transfer_status: TransferStatus;
  transfer_amount: string | null;
  credited_at: Date | null;
};

const SELECT = `
  select e.id, e.code, e.name_latin, e.name_bengali, e.salary,
         case when ${SLIP_STATUS_SQL} = 'none' and sl.id is not null then 'rendered' else ${SLIP_STATUS_SQL} end as slip_status,
         sl.id::text as slip_id, ${TRANSFER_STATUS_SQL} as transfer_status, t.amount::text as transfer_amount, t.credited_at
  from employees e
  ${LATEST_SLIP_JOB}
  left join lateral (
    select id from slips where employee_id = e.id and month = $2 and key not like '%:copy-%' order by created_at desc limit 1
  ) sl on true
  left join salary_transfers t on t.employee_id = e.id and t.month = $2`;

function toRow(r: Row): RegisterRow {
  const { earnings, deductions } = salaryLines(r.salary);
  const sum = (lines: Array<{ amount: number }>) => lines.reduce((a, l) => a + (Number(l.amount) || 0), 0);
  const s = r.salary;
  return {
    id: r.id,
    code: r.code,
    nameLatin: r.name_latin,
    nameBengali: r.name_bengali,
    basic: s.basic,
    houseRent: s.houseRent,
    medical: s.medical,
    conveyance: s.conveyance,
    gross: sum(earnings),
    tax: s.tax,
    providentFund: s.providentFund,
    deductions: sum(deductions),
    net: netPay(s),
    slipStatus: r.slip_status,
    slipId: r.slip_id === null ? null : Number(r.slip_id),
    transferStatus: r.transfer_status,
    transferAmount: r.transfer_amount === null ? null : Number(r.transfer_amount),
    creditedAt: r.credited_at,
  };
}

/** A slice of the month's employees by code: after `afterCode` (exclusive), up to `toCode` (inclusive; null: the last). */
export interface CodeRange {
  afterCode: string;
  toCode: string | null;
}
const ALL: CodeRange = { afterCode: '', toCode: null };

/** How many employees the month has (in the range). */
export async function countMonthEmployees(pool: Pool, companyId: string, month: string, range: CodeRange = ALL): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from employees e where e.company_id = $1 and e.code > $3 and ($4::text is null or e.code <= $4) and ${IN_MONTH_SQL}`,
    [companyId, month, range.afterCode, range.toCode],
  );
  return rows[0]?.n ?? 0;
}

/** The last code of every `size` employees of the month, in code order: the volumes' boundaries. */
export async function monthCodeBoundaries(pool: Pool, companyId: string, month: string, size: number): Promise<string[]> {
  const { rows } = await pool.query<{ code: string }>(
    `select code from (select e.code, row_number() over (order by e.code) as rn from employees e where e.company_id = $1 and ${IN_MONTH_SQL}) t
     where rn % $3 = 0 order by code`,
    [companyId, month, size],
  );
  return rows.map((r) => r.code);
}

/** The month's employees in code order (in the range), `batchSize` at a time. */
export async function* monthEmployeeBatches(
  pool: Pool,
  companyId: string,
  month: string,
  batchSize = 1000,
  range: CodeRange = ALL,
): AsyncGenerator<RegisterRow[]> {
  let after = range.afterCode;
  for (;;) {
    const { rows } = await pool.query<Row>(
      `${SELECT} where e.id in (select e.id from employees e where e.company_id = $1 and e.code > $3 and ($5::text is null or e.code <= $5) and ${IN_MONTH_SQL}
                                order by e.code limit $4)
       order by e.code`,
      [companyId, month, after, batchSize, range.toCode],
    );
    if (rows.length === 0) return;
    yield rows.map(toRow);
    after = rows[rows.length - 1]!.code;
    if (rows.length < batchSize) return;
  }
}

/** One page of the month's employees (the month page), searched by code or name. */
export async function monthEmployeePage(
  pool: Pool,
  companyId: string,
  month: string,
  page: { search?: string | undefined; limit: number; offset: number },
): Promise<{ rows: RegisterRow[]; total: number }> {
  const search = page.search?.trim() ? `%${page.search.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const where = `e.company_id = $1 and ${IN_MONTH_SQL} and ($3::text is null or e.code ilike $3 or e.name_latin ilike $3 or e.name_bengali ilike $3)`;
  const [list, count] = await Promise.all([
    pool.query<Row>(`${SELECT} where e.id in (select e.id from employees e where ${where} order by e.code limit $4 offset $5) order by e.code`, [
      companyId,
      month,
      search,
      page.limit,
      page.offset,
    ]),
    pool.query<{ n: number }>(`select count(*)::int as n from employees e where ${where}`, [companyId, month, search]),
  ]);
  return { rows: list.rows.map(toRow), total: count.rows[0]?.n ?? 0 };
}

/** The stored slips of these employees for the month (the newest attempt's each, no extra copies). */
export async function slipPdfsOf(pool: Pool, employeeIds: number[], month: string): Promise<Map<number, Buffer>> {
  const { rows } = await pool.query<{ employee_id: number; pdf: Buffer }>(
    `select distinct on (employee_id) employee_id, pdf from slips
     where employee_id = any($1::int[]) and month = $2 and key not like '%:copy-%' order by employee_id, created_at desc`,
    [employeeIds, month],
  );
  return new Map(rows.map((r) => [r.employee_id, r.pdf]));
}
