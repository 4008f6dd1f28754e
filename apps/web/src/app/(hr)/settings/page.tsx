'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { Card } from '../../../components/ui.tsx';
import { useErrorText } from '../../../lib/errors.ts';
import { useTRPC } from '../../../lib/trpc.tsx';

/** HR's company settings: password-protected slips and what opens them (a slip code, or — weaker — the date of birth). Strings: messages `settings`. */
export default function SettingsPage() {
  const t = useTranslations('settings');
  const tc = useTranslations('common');
  const errorText = useErrorText();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const settings = useQuery(trpc.company.get.queryOptions());
  const save = useMutation(trpc.company.setProtectSlips.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.company.get.queryKey() }) }));
  const choose = useMutation(
    trpc.company.setSlipPassword.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.company.get.queryKey() }) }),
  );
  const s = settings.data;
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      {settings.isLoading && <p role="status">{tc('loading')}</p>}
      {settings.error && (
        <p role="alert" className="text-red-800">
          {errorText(settings.error)}
        </p>
      )}
      {s && (
        <Card>
          <p className="mb-3 font-medium">{s.name}</p>
          <div className="flex items-start gap-3">
            <input
              id="protect-slips"
              type="checkbox"
              className="mt-1 h-5 w-5 shrink-0"
              data-testid="protect-slips"
              aria-describedby="protect-slips-help"
              checked={s.protectSlips}
              disabled={save.isPending}
              onChange={(e) => save.mutate({ protectSlips: e.target.checked })}
            />
            <div>
              <label htmlFor="protect-slips" className="font-medium">
                {t('protect')}
              </label>
              <p id="protect-slips-help" className="mt-1 text-sm text-slate-700">
                {t('protectHelp')}
              </p>
            </div>
          </div>
          <p data-testid="protect-state" data-on={s.protectSlips} className="mt-3 text-sm font-medium">
            {s.protectSlips ? t('on') : t('off')}
          </p>
          <fieldset className="mt-4" data-testid="slip-password" data-source={s.slipPassword}>
            <legend className="font-medium">{t('passwordTitle')}</legend>
            {(['code', 'date-of-birth'] as const).map((source) => (
              <div key={source} className="mt-2 flex items-start gap-3">
                <input
                  id={`slip-password-${source}`}
                  type="radio"
                  name="slip-password"
                  className="mt-1 h-5 w-5 shrink-0"
                  aria-describedby={`slip-password-${source}-help`}
                  checked={s.slipPassword === source}
                  disabled={choose.isPending}
                  onChange={() => choose.mutate({ slipPassword: source })}
                />
                <div>
                  <label htmlFor={`slip-password-${source}`}>{t(source === 'code' ? 'sourceCode' : 'sourceDob')}</label>
                  <p id={`slip-password-${source}-help`} className="mt-1 text-sm text-slate-700">
                    {t(source === 'code' ? 'sourceCodeHelp' : 'sourceDobHelp')}
                  </p>
                </div>
              </div>
            ))}
            {s.slipPassword === 'date-of-birth' && (
              <p role="alert" data-testid="dob-weaker" className="mt-2 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-900">
                {t('dobWarning')}
              </p>
            )}
          </fieldset>
          {s.protectSlips && s.withoutSlipPassword > 0 && (
            <p
              role="alert"
              data-testid={s.slipPassword === 'code' ? 'missing-code' : 'missing-dob'}
              data-count={s.withoutSlipPassword}
              className="mt-2 rounded border border-amber-300 bg-amber-50 p-2 text-sm text-amber-900"
            >
              {t(s.slipPassword === 'code' ? 'missingCode' : 'missing', { count: s.withoutSlipPassword })}
            </p>
          )}
          {(save.error ?? choose.error) && (
            <p role="alert" className="mt-2 text-sm text-red-800">
              {errorText((save.error ?? choose.error)!)}
            </p>
          )}
          <div aria-live="polite">{(save.isSuccess || choose.isSuccess) && <p className="mt-2 text-sm text-emerald-800">{t('saved')}</p>}</div>
        </Card>
      )}
    </div>
  );
}
