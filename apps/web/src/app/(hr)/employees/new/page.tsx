'use client';
import { useMutation } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { MonthInput } from '../../../../components/inputs/month-input.tsx';
import { Button, Card } from '../../../../components/ui.tsx';
import { useErrorText } from '../../../../lib/errors.ts';
import { useTRPC } from '../../../../lib/trpc.tsx';
import { fieldReasons, newEmployeeSchema } from '@beton/people/validation';
import { EMPTY_SALARY, fieldErrorsOf, Reason, SalaryFields, TextField } from '../fields.tsx';
import { thisMonth } from '../../../../lib/month.ts';

/** Add one employee with their salary (issue 22). Strings: messages `employeeNew` (+ `employeeEdit` for shared field names). */
export default function NewEmployeePage() {
  const t = useTranslations('employeeNew');
  const te = useTranslations('employeeEdit');
  const errorText = useErrorText();
  const trpc = useTRPC();
  const router = useRouter();
  const [form, setForm] = useState({ code: '', nameLatin: '', nameBengali: '', email: '', bankAccount: '', effectiveMonth: thisMonth() });
  const [salary, setSalary] = useState(EMPTY_SALARY);
  const create = useMutation(trpc.people.create.mutationOptions({ onSuccess: (r) => router.push(`/employees/${r.id}`) }));
  // Checked here first with the service's own schema (no request for a form that would be refused); the service checks again.
  const [local, setLocal] = useState<Record<string, string>>({});
  const errors = Object.keys(local).length ? local : fieldErrorsOf(create.error);
  const submit = () => {
    const employee = { ...form, salary };
    const checked = newEmployeeSchema.safeParse(employee);
    if (!checked.success) {
      create.reset();
      setLocal(fieldReasons(checked.error));
      return;
    }
    setLocal({});
    create.mutate({ employee });
  };
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  return (
    <div className="space-y-4">
      <Link href="/employees" className="text-sm text-indigo-700 underline">
        ← {t('back')}
      </Link>
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      <form
        noValidate
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        {(create.error || Object.keys(errors).length > 0) && (
          <p role="alert" data-testid="form-error" className="rounded border border-red-200 bg-red-50 p-2 text-sm text-red-800">
            {Object.keys(errors).length ? te('fix') : errorText(create.error)}
          </p>
        )}
        <Card className="grid gap-3 sm:grid-cols-2">
          <TextField name="code" label={t('code')} value={form.code} onChange={set('code')} error={errors.code} />
          <TextField name="email" type="email" inputMode="email" label={te('email')} value={form.email} onChange={set('email')} error={errors.email} />
          <TextField name="nameLatin" label={te('nameLatin')} value={form.nameLatin} onChange={set('nameLatin')} error={errors.nameLatin} />
          <TextField name="nameBengali" lang="bn" label={te('nameBengali')} value={form.nameBengali} onChange={set('nameBengali')} error={errors.nameBengali} />
          <TextField
            name="bankAccount"
            inputMode="numeric"
            label={te('bankAccount')}
            value={form.bankAccount}
            onChange={set('bankAccount')}
            error={errors.bankAccount}
          />
        </Card>
        <Card className="space-y-3">
          <h2 className="font-semibold">{t('salary')}</h2>
          <SalaryFields value={salary} onChange={setSalary} errors={errors} />
          <div className="max-w-xs">
            <MonthInput id="field-effectiveMonth" label={t('effectiveMonth')} value={form.effectiveMonth} onChange={set('effectiveMonth')} />
            <Reason reason={errors.effectiveMonth} testId="error-effectiveMonth" />
          </div>
        </Card>
        <Button type="submit" disabled={create.isPending}>
          {create.isPending ? t('saving') : t('save')}
        </Button>
      </form>
    </div>
  );
}
