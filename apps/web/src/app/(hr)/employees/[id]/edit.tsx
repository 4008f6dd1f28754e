'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Button, Card, fmtTime } from '../../../../components/ui.tsx';
import { useTRPC } from '../../../../lib/trpc.tsx';
import { employeeDetailsSchema, fieldReasons, salaryChangeSchema } from '@beton/people/validation';
import { fieldErrorsOf, messages, SALARY_LABELS, salaryForm, SalaryFields, TextField, type SalaryForm } from '../fields.tsx';

/** Every string of the employee editor, in English and Bengali (moves to the i18n catalogue as it is). */
const M = {
  en: {
    status: 'Status', active: 'Active', deactivated: 'Deactivated', since: 'since', deactivate: 'Deactivate (leaver)…', reactivate: 'Reactivate',
    deactivateConfirm: 'Deactivate this employee? They are paid for this month and get no slip from next month on.',
    leaverNote: 'A leaver is paid for the month they leave in and gets no slip after it.',
    details: 'Details', nameLatin: 'Name (English)', nameBengali: 'Name (Bengali)', email: 'Email', bankAccount: 'Bank account',
    saveDetails: 'Save details', saved: 'Saved', noChange: 'Nothing changed',
    salary: 'Salary', currentSalary: 'Salary this month', netPay: 'Net pay', history: 'Salary changes', from: 'From month', by: 'by',
    effectiveMonth: 'New salary from month', saveSalary: 'Save salary', fix: 'Please correct the fields marked below.',
    paidMonths: 'This corrects months already paid. Send the corrected slip:', resend: 'Resend the corrected slip for',
    resent: 'The corrected slip is on its way (a new attempt).', copy: 'The old slip had arrived: the corrected slip goes as a new email to',
    inProgress: 'A slip of this month is already on its way; send the corrected one once it has arrived.',
    monthRule: 'Each month pays the latest change from or before it.',
  },
  bn: {
    status: 'অবস্থা', active: 'সক্রিয়', deactivated: 'নিষ্ক্রিয়', since: 'থেকে', deactivate: 'নিষ্ক্রিয় করুন (চাকরি ছেড়েছেন)…', reactivate: 'আবার সক্রিয় করুন',
    deactivateConfirm: 'এই কর্মচারীকে নিষ্ক্রিয় করবেন? এই মাসের বেতন পাবেন, পরের মাস থেকে কোনো স্লিপ পাবেন না।',
    leaverNote: 'চাকরি ছাড়ার মাসের বেতন পান, তার পরে কোনো স্লিপ নয়।',
    details: 'বিবরণ', nameLatin: 'নাম (ইংরেজি)', nameBengali: 'নাম (বাংলা)', email: 'ইমেইল', bankAccount: 'ব্যাংক হিসাব',
    saveDetails: 'বিবরণ সংরক্ষণ', saved: 'সংরক্ষিত', noChange: 'কিছু বদলায়নি',
    salary: 'বেতন', currentSalary: 'এই মাসের বেতন', netPay: 'নিট বেতন', history: 'বেতনের পরিবর্তন', from: 'যে মাস থেকে', by: 'করেছেন',
    effectiveMonth: 'নতুন বেতন যে মাস থেকে', saveSalary: 'বেতন সংরক্ষণ', fix: 'নিচে চিহ্নিত ঘরগুলো ঠিক করুন।',
    paidMonths: 'এতে ইতিমধ্যে পরিশোধিত মাস সংশোধন হলো। সংশোধিত স্লিপ পাঠান:', resend: 'সংশোধিত স্লিপ আবার পাঠান',
    resent: 'সংশোধিত স্লিপ পাঠানো হচ্ছে (নতুন চেষ্টা)।', copy: 'আগের স্লিপ পৌঁছে গিয়েছিল: সংশোধিত স্লিপ নতুন ইমেইলে যাচ্ছে',
    inProgress: 'এই মাসের একটি স্লিপ ইতিমধ্যে পথে; সেটি পৌঁছানোর পর সংশোধিতটি পাঠান।',
    monthRule: 'প্রতিটি মাস সেই মাস বা তার আগের সর্বশেষ পরিবর্তন অনুযায়ী বেতন পায়।',
  },
};
const T = messages(M);

const taka = (n: number) => `৳ ${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const net = (s: Record<keyof typeof SALARY_LABELS, number>) => s.basic + s.houseRent + s.medical + s.conveyance - s.tax - s.providentFund;

export function EmployeeEditor({ id }: { id: number }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const record = useQuery(trpc.people.record.queryOptions({ id }));
  const refresh = () => Promise.all([
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
  const active = useMutation(trpc.people.setActive.mutationOptions({ onSuccess: refresh }));
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
  return (
    <div className="grid gap-4 md:grid-cols-2">
      <Card className="space-y-3">
        <div className="flex flex-wrap items-center gap-3">
          <h2 className="font-semibold"><T k="status" /></h2>
          {r.deactivatedAt
            ? <span data-testid="employee-status" data-active="false" className="rounded bg-slate-200 px-2 py-0.5 text-sm text-slate-800"><T k="deactivated" /> · <T k="since" /> {fmtTime(r.deactivatedAt)}</span>
            : <span data-testid="employee-status" data-active="true" className="rounded bg-emerald-100 px-2 py-0.5 text-sm text-emerald-900"><T k="active" /></span>}
        </div>
        <p className="text-xs text-slate-600"><T k="leaverNote" /></p>
        {r.deactivatedAt
          ? <Button variant="secondary" disabled={active.isPending} onClick={() => active.mutate({ id, active: true })}><T k="reactivate" /></Button>
          : <Button variant="danger" disabled={active.isPending} onClick={() => { if (window.confirm(`${M.en.deactivateConfirm} · ${M.bn.deactivateConfirm}`)) active.mutate({ id, active: false }); }}><T k="deactivate" /></Button>}
        {active.error && <p role="alert" className="text-sm text-red-700">{active.error.message}</p>}

        <h2 className="pt-2 font-semibold"><T k="details" /></h2>
        <form noValidate className="space-y-2" onSubmit={(e) => { e.preventDefault(); saveDetails(); }}>
          <TextField name="nameLatin" label={<T k="nameLatin" />} value={details.nameLatin} onChange={set('nameLatin')} error={detailErrors.nameLatin} />
          <TextField name="nameBengali" lang="bn" label={<T k="nameBengali" />} value={details.nameBengali} onChange={set('nameBengali')} error={detailErrors.nameBengali} />
          <TextField name="details.email" type="email" inputMode="email" label={<T k="email" />} value={details.email} onChange={set('email')} error={detailErrors.email} />
          <TextField name="bankAccount" inputMode="numeric" label={<T k="bankAccount" />} value={details.bankAccount} onChange={set('bankAccount')} error={detailErrors.bankAccount} />
          {update.error && !Object.keys(detailErrors).length && <p role="alert" className="text-sm text-red-700">{update.error.message}</p>}
          {update.isSuccess && <p role="status" data-testid="details-saved" className="text-sm text-emerald-800">{update.data.changed.length ? <T k="saved" /> : <T k="noChange" />}</p>}
          <Button type="submit" disabled={update.isPending}><T k="saveDetails" /></Button>
        </form>
      </Card>

      <Card className="space-y-3">
        <h2 className="font-semibold"><T k="salary" /></h2>
        <p className="text-sm"><T k="currentSalary" /> ({r.currentMonth}): <T k="netPay" /> <span data-testid="current-net" className="font-semibold">{taka(net(r.salary))}</span></p>
        <form noValidate className="space-y-3" onSubmit={(e) => { e.preventDefault(); saveSalary(); }}>
          {(change.error || Object.keys(salaryErrors).length > 0) && <p role="alert" data-testid="salary-error" className="text-sm text-red-700">{Object.keys(salaryErrors).length ? <T k="fix" /> : change.error?.message}</p>}
          <SalaryFields value={salary} onChange={setSalary} errors={salaryErrors} />
          <div className="max-w-xs"><TextField name="effectiveMonth" type="month" label={<T k="effectiveMonth" />} value={effectiveMonth} onChange={setEffectiveMonth} error={salaryErrors.effectiveMonth} /></div>
          <Button type="submit" disabled={change.isPending}><T k="saveSalary" /></Button>
          {change.isSuccess && <p role="status" data-testid="salary-saved" className="text-sm text-emerald-800">{change.data.changed ? <T k="saved" /> : <T k="noChange" />}</p>}
        </form>
        {change.data && change.data.paidMonths.length > 0 && (
          <div data-testid="paid-months" className="rounded border border-amber-300 bg-amber-50 p-2 text-sm">
            <p><T k="paidMonths" /></p>
            <div className="mt-2 flex flex-wrap gap-2">
              {change.data.paidMonths.map((m) => (
                <Button key={m} variant="secondary" disabled={corrected.isPending} onClick={() => corrected.mutate({ id, month: m })}><T k="resend" /> {m}</Button>
              ))}
            </div>
          </div>
        )}
        {corrected.error && <p role="alert" className="text-sm text-red-700">{corrected.error.message}</p>}
        {corrected.data && (
          <p role="status" data-testid="corrected-outcome" data-outcome={corrected.data.outcome} className="text-sm text-indigo-900">
            {corrected.data.outcome === 'resent' ? <T k="resent" /> : corrected.data.outcome === 'copy' ? <><T k="copy" /> {corrected.data.to}</> : <T k="inProgress" />}
          </p>
        )}
        {r.salaryHistory.length > 0 && (
          <div className="overflow-x-auto">
            <h3 className="text-sm font-semibold"><T k="history" /></h3>
            <table className="mt-1 min-w-full text-xs" data-testid="salary-history">
              <thead className="text-left text-slate-600"><tr><th className="pr-2"><T k="from" /></th><th className="pr-2"><T k="netPay" /></th><th><T k="by" /></th></tr></thead>
              <tbody>
                {r.salaryHistory.map((h) => (
                  <tr key={h.effectiveMonth} className="border-t border-slate-100">
                    <td className="pr-2 font-mono">{h.effectiveMonth}</td><td className="pr-2">{taka(net(h.components))}</td><td className="break-all">{h.createdBy} · {fmtTime(h.updatedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <p className="text-xs text-slate-600"><T k="monthRule" /></p>
      </Card>
    </div>
  );
}
