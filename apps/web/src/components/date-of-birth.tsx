'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useEffect, useState } from 'react';
import { fieldError, useErrorText } from '../lib/errors.ts';
import { useTRPC } from '../lib/trpc.tsx';
import { DateInput } from './inputs/date-input.tsx';
import { Button, Card } from './ui.tsx';

/** The employee page's date-of-birth card (issue 22: password-protected slips). Strings: messages `dateOfBirth`. */
export function DateOfBirthCard({ id }: { id: number }) {
  const t = useTranslations('dateOfBirth');
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const current = useQuery(trpc.dateOfBirth.get.queryOptions({ id }));
  const [value, setValue] = useState('');
  useEffect(() => {
    setValue(current.data?.dateOfBirth ?? '');
  }, [current.data?.dateOfBirth]);
  const save = useMutation(
    trpc.dateOfBirth.set.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.dateOfBirth.get.queryKey({ id }) }) }),
  );
  const error = save.error ? (fieldError(save.error, 'dateOfBirth') ? t('invalid') : errorText(save.error)) : null;
  return (
    <Card>
      <h2 className="mb-1 font-semibold">{t('title')}</h2>
      {current.data && !current.data.dateOfBirth && current.data.protectSlips && (
        <p role="alert" data-testid="dob-missing" className="mb-2 text-sm text-amber-900">
          {t('missing')}
        </p>
      )}
      <form
        className="flex flex-wrap items-end gap-2"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate({ id, dateOfBirth: value || null });
        }}
      >
        <div className="text-sm">
          <DateInput
            id="date-of-birth"
            label={t('label')}
            value={value}
            fromYear={new Date().getUTCFullYear() - 100}
            toYear={new Date().getUTCFullYear() - 14}
            onChange={(v) => {
              setValue(v);
              save.reset();
            }}
            invalid={!!error}
            describedBy={error ? 'date-of-birth-hint date-of-birth-error' : 'date-of-birth-hint'}
          />
          <p id="date-of-birth-hint" className="mt-1 text-xs text-slate-600">
            {t('help')}
          </p>
          {error && (
            <p id="date-of-birth-error" role="alert" className="mt-1 text-red-700">
              {error}
            </p>
          )}
        </div>
        <Button type="submit" disabled={save.isPending}>
          {t('save')}
        </Button>
      </form>
      <div aria-live="polite">
        {save.isSuccess && (
          <p data-testid="dob-saved" className="mt-2 text-sm text-emerald-800">
            {t('saved')}
          </p>
        )}
      </div>
    </Card>
  );
}
