'use client';
import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Button, Card } from '../../../../components/ui.tsx';
import { useTRPC } from '../../../../lib/trpc.tsx';
import { fieldReasons, newEmployeeSchema } from '@beton/people/validation';
import { EMPTY_SALARY, fieldErrorsOf, messages, SalaryFields, TextField, thisMonth } from '../fields.tsx';

/** Every string of this page, in English and Bengali (moves to the i18n catalogue as it is). */
const M = {
  en: {
    title: 'Add an employee', back: 'Employees', code: 'Employee code', nameLatin: 'Name (English)', nameBengali: 'Name (Bengali)', email: 'Email',
    bankAccount: 'Bank account', salary: 'Salary', effectiveMonth: 'Salary from month', save: 'Add employee', saving: 'Adding…',
    fix: 'Please correct the fields marked below.',
  },
  bn: {
    title: 'কর্মচারী যোগ করুন', back: 'কর্মচারী', code: 'কর্মচারী কোড', nameLatin: 'নাম (ইংরেজি)', nameBengali: 'নাম (বাংলা)', email: 'ইমেইল',
    bankAccount: 'ব্যাংক হিসাব', salary: 'বেতন', effectiveMonth: 'যে মাস থেকে বেতন', save: 'কর্মচারী যোগ করুন', saving: 'যোগ হচ্ছে…',
    fix: 'নিচে চিহ্নিত ঘরগুলো ঠিক করুন।',
  },
};
const T = messages(M);

export default function NewEmployeePage() {
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
      <Link href="/employees" className="text-sm text-indigo-700 underline">← <T k="back" /></Link>
      <h1 className="text-2xl font-semibold"><T k="title" /></h1>
      <form noValidate className="space-y-4" onSubmit={(e) => { e.preventDefault(); submit(); }}>
        {(create.error || Object.keys(errors).length > 0) && (
          <p role="alert" data-testid="form-error" className="rounded border border-red-200 bg-red-50 p-2 text-sm text-red-800">
            {Object.keys(errors).length ? <T k="fix" /> : create.error?.message}
          </p>
        )}
        <Card className="grid gap-3 sm:grid-cols-2">
          <TextField name="code" label={<T k="code" />} value={form.code} onChange={set('code')} error={errors.code} />
          <TextField name="email" type="email" inputMode="email" label={<T k="email" />} value={form.email} onChange={set('email')} error={errors.email} />
          <TextField name="nameLatin" label={<T k="nameLatin" />} value={form.nameLatin} onChange={set('nameLatin')} error={errors.nameLatin} />
          <TextField name="nameBengali" lang="bn" label={<T k="nameBengali" />} value={form.nameBengali} onChange={set('nameBengali')} error={errors.nameBengali} />
          <TextField name="bankAccount" inputMode="numeric" label={<T k="bankAccount" />} value={form.bankAccount} onChange={set('bankAccount')} error={errors.bankAccount} />
        </Card>
        <Card className="space-y-3">
          <h2 className="font-semibold"><T k="salary" /></h2>
          <SalaryFields value={salary} onChange={setSalary} errors={errors} />
          <div className="max-w-xs"><TextField name="effectiveMonth" type="month" label={<T k="effectiveMonth" />} value={form.effectiveMonth} onChange={set('effectiveMonth')} error={errors.effectiveMonth} /></div>
        </Card>
        <Button type="submit" disabled={create.isPending}>{create.isPending ? <T k="saving" /> : <T k="save" />}</Button>
      </form>
    </div>
  );
}
