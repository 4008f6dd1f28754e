import type { Pool } from '@beton/db';
import { PermanentError } from '@beton/jobs/client';
import { slipKey } from './jobs/slip-payload.ts';
import { deliverEmail, type DeliverOptions, type DeliveryResult } from './email.ts';
import type { Mailer } from './mailer.ts';
import { bankStatusEmail, reminderEmail, slipEmail } from './messages.ts';
import { loadSlipData, loadSlipToSend, type RenderSlipPayload } from './slip.ts';

export interface MailDeps {
  pool: Pool;
  mailer: Mailer;
  delivery?: DeliverOptions;
}

/** The send-slip-email job: the stored PDF, attached, exactly once per slip key. */
export async function sendSlip(deps: MailDeps, payload: RenderSlipPayload): Promise<DeliveryResult> {
  const key = slipKey(payload);
  const { data, stored } = await loadSlipToSend(deps.pool, payload.employeeId, payload.month, key);
  if (!stored) throw new PermanentError('slip_missing', `No rendered slip stored for ${key}`);
  const content = slipEmail({
    nameLatin: data.employee.nameLatin,
    nameBengali: data.employee.nameBengali,
    company: data.company.name,
    month: payload.month,
    netPay: data.netPay,
    passwordProtected: stored.encrypted,
    passwordSource: data.passwordSource,
  });
  return deliverEmail(
    deps,
    {
      to: data.employee.email,
      ...content,
      idempotencyKey: key,
      attachment: { filename: `salary-slip-${payload.month}-${data.employee.code}.pdf`, content: stored.pdf, type: 'application/pdf' },
      ...(data.replyTo ? { replyTo: data.replyTo } : {}),
      links: { payrollRunId: payload.payrollRunId, companyId: payload.companyId, employeeId: payload.employeeId },
    },
    deps.delivery,
  );
}

export async function sendReminder(deps: MailDeps, payload: { employeeId: number; month: string }, key: string): Promise<DeliveryResult> {
  const data = await loadSlipData(deps.pool, payload.employeeId, payload.month);
  const content = reminderEmail({
    nameLatin: data.employee.nameLatin,
    nameBengali: data.employee.nameBengali,
    company: data.company.name,
    month: payload.month,
  });
  return deliverEmail(
    deps,
    {
      to: data.employee.email,
      ...content,
      idempotencyKey: key,
      ...(data.replyTo ? { replyTo: data.replyTo } : {}),
      links: { companyId: data.companyId, employeeId: payload.employeeId },
    },
    deps.delivery,
  );
}

export async function sendBankStatus(
  deps: MailDeps,
  payload: { companyId: string; pollWindow: string; credited: number },
  key: string,
): Promise<DeliveryResult | null> {
  const { rows } = await deps.pool.query<{ name: string; email: string }>(
    `select c.name, u.email from companies c join users u on u.company_id = c.id and u.role = 'HR' where c.id = $1 order by u.created_at limit 1`,
    [payload.companyId],
  );
  const hr = rows[0];
  if (!hr) throw new PermanentError('no_hr_user', `Company ${payload.companyId} has no HR user to notify`);
  const content = bankStatusEmail({ company: hr.name, credited: payload.credited, window: payload.pollWindow });
  return deliverEmail(deps, { to: hr.email, ...content, idempotencyKey: key }, deps.delivery);
}
