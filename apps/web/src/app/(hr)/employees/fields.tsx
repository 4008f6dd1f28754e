'use client';
/**
 * Form pieces of HR's employee pages (issue 22): a labelled input that shows its field's error
 * reason in English and Bengali (reason keys from @beton/people/reasons, the one catalogue the
 * services answer with), the salary components, and reading field errors from a tRPC error.
 */
import { reasonText } from '@beton/people/reasons';
import { TRPCClientError } from '@trpc/client';
import type { ReactNode } from 'react';
import { L } from '../../../components/ui.tsx';

export type Bilingual<K extends string> = { en: Record<K, string>; bn: Record<K, string> };

/** A page's messages object → a component showing one message in both languages. */
export function messages<K extends string>(m: Bilingual<K>) {
  return function T({ k }: { k: K }) {
    return <L en={m.en[k]} bn={m.bn[k]} />;
  };
}

/** Field → reason key of a failed mutation (the services' INVALID_INPUT / CONFLICT), or {}. */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  if (error instanceof TRPCClientError) {
    const fe = (error.data as { fieldErrors?: Record<string, string | string[]> | null } | undefined)?.fieldErrors;
    if (fe) return Object.fromEntries(Object.entries(fe).map(([k, v]) => [k, Array.isArray(v) ? v[0] ?? '' : v]));
  }
  return {};
}

export function Reason({ reason, testId }: { reason: string | undefined; testId?: string }) {
  if (!reason) return null;
  const text = reasonText(reason);
  return <p role="alert" data-testid={testId} data-reason={reason} className="mt-1 text-sm text-red-700"><L en={text.en} bn={text.bn} /></p>;
}

export function TextField({ name, label, value, onChange, error, inputMode, lang, type = 'text', autoComplete = 'off' }: {
  name: string; label: ReactNode; value: string; onChange: (v: string) => void; error?: string | undefined;
  inputMode?: 'decimal' | 'email' | 'text' | 'numeric'; lang?: string; type?: string; autoComplete?: string;
}) {
  const id = `field-${name.replace(/\W/g, '-')}`;
  return (
    <div className="text-sm">
      <label htmlFor={id} className="block text-slate-700">{label}</label>
      <input id={id} name={name} type={type} value={value} inputMode={inputMode} lang={lang} autoComplete={autoComplete} aria-invalid={!!error}
        aria-describedby={error ? `${id}-error` : undefined} onChange={(e) => onChange(e.target.value)}
        className={`mt-1 block w-full rounded border px-2 py-1.5 ${error ? 'border-red-600' : 'border-slate-300'}`} />
      <div id={`${id}-error`}><Reason reason={error} testId={`error-${name}`} /></div>
    </div>
  );
}

export const SALARY_LABELS = {
  basic: { en: 'Basic salary', bn: 'মূল বেতন' },
  houseRent: { en: 'House rent', bn: 'বাড়ি ভাড়া' },
  medical: { en: 'Medical allowance', bn: 'চিকিৎসা ভাতা' },
  conveyance: { en: 'Conveyance', bn: 'যাতায়াত ভাতা' },
  tax: { en: 'Income tax', bn: 'আয়কর' },
  providentFund: { en: 'Provident fund', bn: 'ভবিষ্য তহবিল' },
} as const;
export type SalaryForm = Record<keyof typeof SALARY_LABELS, string>;
export const EMPTY_SALARY: SalaryForm = { basic: '', houseRent: '', medical: '', conveyance: '', tax: '', providentFund: '' };

export function salaryForm(s: Record<keyof typeof SALARY_LABELS, number>): SalaryForm {
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, String(v)])) as SalaryForm;
}

/** The six components in taka (text inputs: "25,000.50" is read by the service), errors under `salary.<component>`. */
export function SalaryFields({ value, onChange, errors }: { value: SalaryForm; onChange: (v: SalaryForm) => void; errors: Record<string, string> }) {
  return (
    <div className="grid grid-cols-2 gap-3 sm:grid-cols-3">
      {(Object.keys(SALARY_LABELS) as Array<keyof typeof SALARY_LABELS>).map((k) => (
        <TextField key={k} name={`salary.${k}`} inputMode="decimal" label={<L en={`${SALARY_LABELS[k].en} (৳)`} bn={SALARY_LABELS[k].bn} />}
          value={value[k]} onChange={(v) => onChange({ ...value, [k]: v })} error={errors[`salary.${k}`]} />
      ))}
    </div>
  );
}

export function thisMonth(): string {
  return new Date().toISOString().slice(0, 7);
}
