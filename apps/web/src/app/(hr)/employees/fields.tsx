'use client';
/**
 * Form pieces of HR's employee pages (issue 22): a labelled input that shows its field's error
 * reason in the page's language (reason keys from @beton/people/reasons, the one catalogue the
 * services answer with and the import's CSV error report is written from), the salary
 * components, and reading field errors from a tRPC error.
 */
import { reasonText } from '@beton/people/reasons';
import { useLocale, useTranslations } from 'next-intl';
import type { ReactNode } from 'react';
import { INPUT } from '../../../components/ui.tsx';
import { errorData } from '../../../lib/errors.ts';

/** Field → reason key of a failed mutation (the services' INVALID_INPUT / CONFLICT), or {}. */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  const fe = errorData(error)?.fieldErrors;
  if (!fe) return {};
  return Object.fromEntries(Object.entries(fe).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? (v[0] ?? '') : v]])));
}

/** A reason key (or a reason's English/Bengali pair) as text in the page's language. */
export function useReasonText(): (reason: string) => string {
  const locale = useLocale();
  return (reason) => reasonText(reason)[locale === 'bn' ? 'bn' : 'en'];
}

export function Reason({ reason, testId }: { reason: string | undefined; testId?: string }) {
  const text = useReasonText();
  if (!reason) return null;
  return (
    <p role="alert" data-testid={testId} data-reason={reason} className="mt-1 text-sm text-red-800">
      {text(reason)}
    </p>
  );
}

export function TextField({
  name,
  label,
  value,
  onChange,
  error,
  inputMode,
  lang,
  type = 'text',
  autoComplete = 'off',
}: {
  name: string;
  label: ReactNode;
  value: string;
  onChange: (v: string) => void;
  error?: string | undefined;
  inputMode?: 'decimal' | 'email' | 'text' | 'numeric';
  lang?: string;
  type?: string;
  autoComplete?: string;
}) {
  const id = `field-${name.replace(/\W/g, '-')}`;
  return (
    <div className="text-sm">
      <label htmlFor={id} className="block font-medium text-slate-800">
        {label}
      </label>
      <input
        id={id}
        name={name}
        type={type}
        value={value}
        inputMode={inputMode}
        lang={lang}
        autoComplete={autoComplete}
        aria-invalid={!!error}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => onChange(e.target.value)}
        className={`${INPUT} ${error ? 'border-red-600' : ''}`}
      />
      <div id={`${id}-error`}>
        <Reason reason={error} testId={`error-${name}`} />
      </div>
    </div>
  );
}

export const SALARY_COMPONENTS = ['basic', 'houseRent', 'medical', 'conveyance', 'tax', 'providentFund'] as const;
export type SalaryComponent = (typeof SALARY_COMPONENTS)[number];
export type SalaryForm = Record<SalaryComponent, string>;
export const EMPTY_SALARY: SalaryForm = { basic: '', houseRent: '', medical: '', conveyance: '', tax: '', providentFund: '' };

export function salaryForm(s: Record<SalaryComponent, number>): SalaryForm {
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, String(v)])) as SalaryForm;
}

/** Net pay of a salary's components: earnings less tax and provident fund. */
export const netOf = (s: Record<SalaryComponent, number>) => s.basic + s.houseRent + s.medical + s.conveyance - s.tax - s.providentFund;

/** The six components in taka (text inputs: "25,000.50" is read by the service), errors under `salary.<component>`. */
export function SalaryFields({ value, onChange, errors }: { value: SalaryForm; onChange: (v: SalaryForm) => void; errors: Record<string, string> }) {
  const t = useTranslations('salary');
  return (
    <div className="grid grid-cols-1 gap-3 min-[400px]:grid-cols-2 sm:grid-cols-3">
      {SALARY_COMPONENTS.map((k) => (
        <TextField
          key={k}
          name={`salary.${k}`}
          inputMode="decimal"
          label={t(k)}
          value={value[k]}
          onChange={(v) => onChange({ ...value, [k]: v })}
          error={errors[`salary.${k}`]}
        />
      ))}
    </div>
  );
}
