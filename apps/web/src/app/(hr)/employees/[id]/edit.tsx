'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useEffect, useState } from 'react';
import { MonthInput } from '../../../../components/inputs/month-input.tsx';
import { Button, Card } from '../../../../components/ui.tsx';
import { confirmDialog } from '../../../../components/ui/dialog.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../../components/ui/table.tsx';
import { toast } from '../../../../components/ui/toast.tsx';
import { useErrorText } from '../../../../lib/errors.ts';
import { useFmt } from '../../../../lib/format.ts';
import { useTRPC } from '../../../../lib/trpc.tsx';
import { useActorName } from '../../../../components/words.tsx';
import { employeeDetailsSchema, fieldReasons, salaryChangeSchema } from '@beton/people/validation';
import { fieldErrorsOf, netOf, Reason, salaryForm, SalaryFields, TextField, type SalaryForm } from '../fields.tsx';

/** Status (deactivate a leaver), details and salary of one employee (issue 22). Strings: messages `employeeEdit`. */
export function EmployeeEditor({ id }: { id: number }) {
  const t = useTranslations('employeeEdit');
  const { when, month: monthName, money } = useFmt();
  const errorText = useErrorText();
  const actorName = useActorName();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const record = useQuery(trpc.people.record.queryOptions({ id }));
  const refresh = () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: trpc.people.record.queryKey({ id }) }),
      qc.invalidateQueries({ queryKey: trpc.employees.get.queryKey({ id }) }),
    ]);
  const [details, setDetails] = useState({ nameLatin: '', nameBengali: '', email: '', bankAccount: '' });
  const [salary, setSalary] = useState<SalaryForm | null>(null);
  const [effectiveMonth, setEffectiveMonth] = useState('');
  const r = record.data;
  useEffect(() => {
    if (!r) return;
    setDetails({ nameLatin: r.nameLatin, nameBengali: r.nameBengali, email: r.email, bankAccount: r.bankAccount });
    setSalary((s) => s ?? salaryForm(r.salary));
    setEffectiveMonth((m) => m || r.currentMonth);
  }, [r]);
  const update = useMutation(trpc.people.update.mutationOptions({ onSuccess: refresh }));
  const active = useMutation(
    trpc.people.setActive.mutationOptions({
      onSuccess: (_d, input) => {
        toast({ title: t(input.active ? 'reactivated' : 'deactivated', { name: r?.nameLatin ?? '' }), variant: 'success' });
        return refresh();
      },
    }),
  );
  const change = useMutation(trpc.people.changeSalary.mutationOptions({ onSuccess: refresh }));
  const corrected = useMutation(trpc.people.resendCorrected.mutationOptions({ onSuccess: refresh }));
  // Each form is checked here first with the service's own schema (no request for input it would refuse); the service checks again.
  const [localDetails, setLocalDetails] = useState<Record<string, string>>({});
  const [localSalary, setLocalSalary] = useState<Record<string, string>>({});
  if (!r || !salary) return null;
  const detailErrors = Object.keys(localDetails).length ? localDetails : fieldErrorsOf(update.error);
  const salaryErrors = Object.keys(localSalary).length ? localSalary : fieldErrorsOf(change.error);
  const saveDetails = () => {
    const checked = employeeDetailsSchema.safeParse(details);
    setLocalDetails(checked.success ? {} : fieldReasons(checked.error));
    if (!checked.success) return update.reset();
    update.mutate({ id, details });
  };
  const saveSalary = () => {
    corrected.reset();
    const input = { salary, effectiveMonth };
    const checked = salaryChangeSchema.safeParse(input);
    setLocalSalary(checked.success ? {} : fieldReasons(checked.error));
    if (!checked.success) return change.reset();
    change.mutate({ id, change: input });
  };
  const set = (k: keyof typeof details) => (v: string) => setDetails({ ...details, [k]: v });
  const deactivate = async () => {
    if (
      await confirmDialog({
        title: t('deactivateTitle', { name: r.nameLatin }),
        description: t('deactivateText'),
        confirmLabel: t('deactivateButton'),
        danger: true,
      })
    )
      active.mutate({ id, active: false });
  };
  // The corrected slip emails the employee (a second email if the old one arrived): asked first.
  const askCorrected = async (m: string) => {
    if (
      await confirmDialog({
        title: t('confirmCorrectedTitle', { month: monthName(m) }),
        description: t('confirmCorrected', { to: r.email }),
        confirmLabel: t('confirmCorrectedButton'),
      })
    )
      corrected.mutate({ id, month: m });
  };
  return (
    <div className="grid gap-4 md:grid-cols-2">
      <Card className="space-y-3">
        <div className="flex flex-wrap items-center gap-3">
          <h2 className="font-semibold">{t('status')}</h2>
          {r.deactivatedAt ? (
            <span data-testid="employee-status" data-active="false" className="rounded bg-slate-200 px-2 py-0.5 text-sm text-slate-800">
              {t('deactivatedSince', { when: when(r.deactivatedAt) })}
            </span>
          ) : (
            <span data-testid="employee-status" data-active="true" className="rounded bg-emerald-100 px-2 py-0.5 text-sm text-emerald-900">
              {t('active')}
            </span>
          )}
        </div>
        <p className="text-xs text-slate-700">{t('leaverNote')}</p>
        {r.deactivatedAt ? (
          <Button variant="secondary" disabled={active.isPending} onClick={() => active.mutate({ id, active: true })}>
            {t('reactivate')}
          </Button>
        ) : (
          <Button variant="danger" data-testid="deactivate" disabled={active.isPending} onClick={() => void deactivate()}>
            {t('deactivate')}
          </Button>
        )}
        {active.error && (
          <p role="alert" className="text-sm text-red-800">
            {errorText(active.error)}
          </p>
        )}

        <h2 className="pt-2 font-semibold">{t('details')}</h2>
        <form
          noValidate
          className="space-y-2"
          onSubmit={(e) => {
            e.preventDefault();
            saveDetails();
          }}
        >
          <TextField name="nameLatin" label={t('nameLatin')} value={details.nameLatin} onChange={set('nameLatin')} error={detailErrors.nameLatin} />
          <TextField
            name="nameBengali"
            lang="bn"
            label={t('nameBengali')}
            value={details.nameBengali}
            onChange={set('nameBengali')}
            error={detailErrors.nameBengali}
          />
          <TextField
            name="details.email"
            type="email"
            inputMode="email"
            label={t('email')}
            value={details.email}
            onChange={set('email')}
            error={detailErrors.email}
          />
          <TextField
            name="bankAccount"
            inputMode="numeric"
            label={t('bankAccount')}
            value={details.bankAccount}
            onChange={set('bankAccount')}
            error={detailErrors.bankAccount}
          />
          {update.error && !Object.keys(detailErrors).length && (
            <p role="alert" className="text-sm text-red-800">
              {errorText(update.error)}
            </p>
          )}
          <div aria-live="polite">
            {update.isSuccess && (
              <p data-testid="details-saved" className="text-sm text-emerald-800">
                {update.data.changed.length ? t('saved') : t('noChange')}
              </p>
            )}
          </div>
          <Button type="submit" disabled={update.isPending}>
            {t('saveDetails')}
          </Button>
        </form>
      </Card>

      <Card className="space-y-3">
        <h2 className="font-semibold">{t('salary')}</h2>
        <p className="text-sm">
          {t.rich('currentSalary', { month: monthName(r.currentMonth), net: money(netOf(r.salary)), b: (chunks) => <b data-testid="current-net">{chunks}</b> })}
        </p>
        <form
          noValidate
          className="space-y-3"
          onSubmit={(e) => {
            e.preventDefault();
            saveSalary();
          }}
        >
          {(change.error || Object.keys(salaryErrors).length > 0) && (
            <p role="alert" data-testid="salary-error" className="text-sm text-red-800">
              {Object.keys(salaryErrors).length ? t('fix') : errorText(change.error)}
            </p>
          )}
          <SalaryFields value={salary} onChange={setSalary} errors={salaryErrors} />
          <div className="max-w-xs">
            <MonthInput id="field-effectiveMonth" label={t('effectiveMonth')} value={effectiveMonth} onChange={setEffectiveMonth} />
            <Reason reason={salaryErrors.effectiveMonth} testId="error-effectiveMonth" />
          </div>
          <Button type="submit" disabled={change.isPending}>
            {t('saveSalary')}
          </Button>
          <div aria-live="polite">
            {change.isSuccess && (
              <p data-testid="salary-saved" className="text-sm text-emerald-800">
                {change.data.changed ? t('saved') : t('noChange')}
              </p>
            )}
          </div>
        </form>
        {change.data && change.data.paidMonths.length > 0 && (
          <div data-testid="paid-months" className="rounded border border-amber-300 bg-amber-50 p-2 text-sm text-amber-950">
            <p>{t('paidMonths')}</p>
            <div className="mt-2 flex flex-wrap gap-2">
              {change.data.paidMonths.map((m) => (
                <Button key={m} variant="secondary" data-month={m} disabled={corrected.isPending} onClick={() => void askCorrected(m)}>
                  {t('resend', { month: monthName(m) })}
                </Button>
              ))}
            </div>
          </div>
        )}
        {corrected.error && (
          <p role="alert" className="text-sm text-red-800">
            {errorText(corrected.error)}
          </p>
        )}
        <div aria-live="polite">
          {corrected.data && (
            <p data-testid="corrected-outcome" data-outcome={corrected.data.outcome} className="text-sm text-indigo-900">
              {corrected.data.outcome === 'resent'
                ? t('resent')
                : corrected.data.outcome === 'copy'
                  ? t('copy', { to: corrected.data.to ?? '' })
                  : t('inProgress')}
            </p>
          )}
        </div>
        {r.salaryHistory.length > 0 && (
          <div>
            <h3 className="text-sm font-semibold">{t('history')}</h3>
            <Table caption={t('historyCaption')} className={`mt-1 text-xs ${STACK_ON_PHONE}`} data-testid="salary-history">
              <THead>
                <tr>
                  <Th>{t('from')}</Th>
                  <Th>{t('netPay')}</Th>
                  <Th>{t('by')}</Th>
                </tr>
              </THead>
              <tbody>
                {r.salaryHistory.map((h) => (
                  <tr key={h.effectiveMonth} data-month={h.effectiveMonth} className="border-t border-slate-100">
                    <Td data-label={t('from')}>{monthName(h.effectiveMonth)}</Td>
                    <Td data-label={t('netPay')}>{money(netOf(h.components))}</Td>
                    <Td data-label={t('by')} className="break-all">
                      {t('changedBy', { who: actorName(h.createdBy), when: when(h.updatedAt) })}
                    </Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          </div>
        )}
        <p className="text-xs text-slate-700">{t('monthRule')}</p>
      </Card>
    </div>
  );
}
