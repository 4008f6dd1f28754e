'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../components/ui/table.tsx';
import { useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { useTRPC } from '../../../lib/trpc.tsx';

export default function WorkersPage() {
  const t = useTranslations('workers');
  const { when, num } = useFmt();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const workers = useQuery({ ...trpc.admin.workers.queryOptions(), refetchInterval: 5_000 });
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      {workers.error && (
        <p role="alert" className="text-red-800">
          {errorText(workers.error)}
        </p>
      )}
      <Table className={STACK_ON_PHONE}>
        <THead>
          <tr>
            <Th>{t('worker')}</Th>
            <Th>{t('queue')}</Th>
            <Th>{t('host')}</Th>
            <Th>{t('pid')}</Th>
            <Th>{t('lastSeen')}</Th>
            <Th>{t('state')}</Th>
          </tr>
        </THead>
        <tbody>
          {workers.data?.map((w) => (
            <tr key={w.id} className="border-t border-slate-100">
              <Td data-label={t('worker')} className="font-mono break-all">
                {w.id}
              </Td>
              <Td data-label={t('queue')}>{w.queue}</Td>
              <Td data-label={t('host')} className="break-all">
                {w.host}
              </Td>
              <Td data-label={t('pid')}>{w.pid}</Td>
              <Td data-label={t('lastSeen')}>{when(w.lastSeen)}</Td>
              <Td
                data-label={t('state')}
                data-testid="worker-state"
                data-state={w.state}
                className={w.state === 'stopped' ? 'text-slate-700' : w.state === 'silent' || w.state === 'stalled' ? 'text-red-800' : 'text-emerald-800'}
              >
                {w.state === 'stopped' ? (
                  t('stopped')
                ) : w.state === 'stalled' ? (
                  <>
                    {t('stalled')}{' '}
                    <span className="text-xs" data-testid="worker-stall-reason">
                      {t('stalledSince', { reason: w.stallReason ?? '', since: when(w.stalledSince) })}
                    </span>
                  </>
                ) : w.state === 'silent' ? (
                  <>
                    {t('silent')} <span className="text-xs">{t('silentText', { seconds: num(Math.round(w.silentAfterMs / 1000)) })}</span>
                  </>
                ) : (
                  t('alive')
                )}
                {w.runnerDeaths > 0 && <span className="ml-1 text-xs text-slate-700">· {t('runnerReplaced', { count: w.runnerDeaths })}</span>}
              </Td>
            </tr>
          ))}
        </tbody>
      </Table>
      {workers.data?.length === 0 && <p className="p-2 text-sm text-slate-700">{t('none')}</p>}
    </div>
  );
}
