'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { useErrorText } from '../lib/errors.ts';
import { useFmt } from '../lib/format.ts';
import { useTRPC } from '../lib/trpc.tsx';
import { Button, Card } from './ui.tsx';
import { confirmDialog } from './ui/dialog.tsx';

/**
 * The employee page's slip code card: whether the employee has a code (never the code), and a
 * new one — shown this once, for HR to hand over. Strings: messages `slipCode`.
 */
export function SlipCodeCard({ id }: { id: number }) {
  const t = useTranslations('slipCode');
  const { when } = useFmt();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const status = useQuery(trpc.slipCode.get.queryOptions({ id }));
  const make = useMutation(trpc.slipCode.make.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.slipCode.get.queryKey({ id }) }) }));
  const s = status.data;
  const create = async () => {
    if (s?.set && !(await confirmDialog({ title: t('confirmTitle'), description: t('confirm'), confirmLabel: t('replace'), danger: true }))) return;
    make.mutate({ id });
  };
  return (
    <Card>
      <h2 className="mb-1 font-semibold">{t('title')}</h2>
      <p className="mb-2 text-sm text-slate-700">{t('help')}</p>
      {s && s.slipPassword === 'date-of-birth' && <p className="mb-2 text-sm text-slate-700">{t('notUsed')}</p>}
      {s && (
        <p data-testid="slip-code-state" data-set={s.set} className="mb-2 text-sm">
          {s.set && s.setAt ? t('setOn', { when: when(s.setAt) }) : t('none')}
        </p>
      )}
      {s && !s.set && s.protectSlips && s.slipPassword === 'code' && (
        <p role="alert" data-testid="slip-code-missing" className="mb-2 text-sm text-amber-900">
          {t('missing')}
        </p>
      )}
      <Button disabled={make.isPending || !s} onClick={() => void create()}>
        {s?.set ? t('replace') : t('make')}
      </Button>
      <div aria-live="polite">
        {make.data && (
          <p className="mt-2 text-sm">
            {t('shown')}{' '}
            <code data-testid="slip-code" className="rounded bg-slate-100 px-2 py-1 font-mono text-base">
              {make.data.code}
            </code>
          </p>
        )}
        {make.error && (
          <p role="alert" className="mt-2 text-sm text-red-800">
            {errorText(make.error)}
          </p>
        )}
      </div>
    </Card>
  );
}
