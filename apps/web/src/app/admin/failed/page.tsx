'use client';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { Suspense, useEffect, useMemo, useState } from 'react';
import { Button, Card, Field, INPUT, Pager } from '../../../components/ui.tsx';
import { confirmDialog } from '../../../components/ui/dialog.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../components/ui/table.tsx';
import { isConflict, useErrorText } from '../../../lib/errors.ts';
import { useFmt } from '../../../lib/format.ts';
import { useTRPC } from '../../../lib/trpc.tsx';
import { DateInput } from '../../../components/inputs/date-input.tsx';
import { useSupersededReason, useTaskName } from '../../../components/words.tsx';
import { filterQuery, parseFilter, type Filter, type View } from './filter.ts';

const PAGE = 50;
const KINDS = ['transient', 'permanent'] as const;

export default function FailedJobsPage() {
  return (
    <Suspense>
      <FailedJobs />
    </Suspense>
  );
}

function FailedJobs() {
  const t = useTranslations('failed');
  const tc = useTranslations('common');
  const { num, when } = useFmt();
  const errorText = useErrorText();
  const superseded = useSupersededReason();
  const taskName = useTaskName();
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const { filter, view, invalid } = useMemo(() => parseFilter(new URLSearchParams(params.toString())), [params]);
  const query = filterQuery(filter, view);
  const [offset, setOffset] = useState(0);
  // The error-text box writes the address a moment after typing stops.
  const [q, setQ] = useState(filter.q ?? '');
  const [selected, setSelected] = useState<Set<number>>(new Set());
  // The last action's outcome, said once (aria-live) and cleared when it no longer describes the list.
  const [result, setResult] = useState<{ text: string; kind: 'ok' | 'error' | 'changed' } | null>(null);
  useEffect(() => {
    setSelected(new Set());
    setResult(null);
    setOffset(0);
  }, [query]);
  useEffect(() => {
    if (!result) return;
    const tm = setTimeout(() => setResult(null), 20_000);
    return () => clearTimeout(tm);
  }, [result]);

  const facets = useQuery(trpc.admin.failedFacets.queryOptions());
  const list = useQuery({ ...trpc.admin.failedList.queryOptions({ ...filter, limit: PAGE, offset, view }), placeholderData: keepPreviousData });
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.admin.pathKey() });
  const retry = useMutation(trpc.admin.retry.mutationOptions({ onSettled: refresh }));
  const retryAll = useMutation(trpc.admin.retryMatching.mutationOptions({ onSettled: refresh }));
  const discard = useMutation(trpc.admin.discard.mutationOptions({ onSettled: refresh }));
  const discardAll = useMutation(trpc.admin.discardMatching.mutationOptions({ onSettled: refresh }));
  const busy = retry.isPending || retryAll.isPending || discard.isPending || discardAll.isPending;
  const total = list.data?.total ?? 0;
  const rows = list.data?.rows ?? [];
  const selectable = rows.filter((j) => !j.supersededBy);

  const set = (patch: Filter) => {
    const next = filterQuery({ ...filter, ...patch }, view);
    router.replace(next ? `${pathname}?${next}` : pathname, { scroll: false });
  };
  useEffect(() => {
    if (q === (filter.q ?? '')) return;
    const tm = setTimeout(() => set({ q: q || undefined }), 300);
    return () => clearTimeout(tm);
  }, [q]);
  const setView = (v: View) => {
    const next = filterQuery(filter, v);
    router.replace(next ? `${pathname}?${next}` : pathname, { scroll: false });
  };
  const done = (kind: 'retried' | 'discarded', count: number) => {
    setResult({ text: t(kind, { count }), kind: 'ok' });
    setSelected(new Set());
  };
  const failed = (error: unknown) => setResult({ text: errorText(error), kind: 'error' });

  /** What a retry would do, said in the dialog: how many emails go out, and which steps run again. */
  const retryText = async (target: { ids: number[] } | { filter: Filter }) => {
    const impact = await qc.fetchQuery({ ...trpc.admin.retryImpact.queryOptions(target), staleTime: 0 });
    const list = impact.byTask.map((x) => t('taskCount', { n: num(x.n), task: taskName(x.task) })).join(', ');
    return `${t('retryEmails', { count: impact.emails })} ${t('retryTasks', { list })}`;
  };
  /** The retry's outcome; jobs that were no longer failed (another admin retried them, or HR's resend replaced them) are said. */
  const retried = (asked: number, count: number) => {
    setResult({ text: asked > count ? `${t('retried', { count })} ${t('notRetried', { count: asked - count })}` : t('retried', { count }), kind: 'ok' });
    setSelected(new Set());
  };

  // Retry / discard all that match: the server acts only if the filter still matches the
  // count confirmed here; otherwise (CONFLICT) the page shows the new count and asks again.
  const confirmAll = async (action: 'retry' | 'discard') => {
    setResult(null);
    let expected = total;
    for (;;) {
      let description: string | undefined = t('cannotUndo');
      if (action === 'retry') {
        try {
          description = await retryText({ filter });
        } catch (error) {
          return failed(error);
        }
      }
      const ok =
        expected > 0 &&
        (await confirmDialog({
          title: t(action === 'retry' ? 'confirmRetryAll' : 'confirmDiscardAll', { count: expected }),
          description,
          confirmLabel: t(action === 'retry' ? 'retryAll' : 'discardAll', { count: num(expected) }),
          danger: action === 'discard',
        }));
      if (!ok) return;
      // No condition means every failed job: the API wants that said (matchAll).
      const input = { filter, expected, ...(Object.keys(filter).length === 0 ? { matchAll: true as const } : {}) };
      try {
        if (action === 'retry') retried(expected, (await retryAll.mutateAsync(input)).retried);
        else done('discarded', (await discardAll.mutateAsync(input)).discarded);
        return;
      } catch (error) {
        if (!isConflict(error)) return failed(error);
        expected = (await list.refetch()).data?.total ?? 0;
        setResult({ text: t('countChanged', { count: num(expected) }), kind: 'changed' });
      }
    }
  };
  // Every retry and discard asks first; a retry says how many emails it sends and what runs again.
  const act = async (action: 'retry' | 'discard', ids: number[]) => {
    setResult(null);
    const title =
      ids.length === 1
        ? t(action === 'retry' ? 'confirmRetryOne' : 'confirmDiscardOne', { id: String(ids[0]) })
        : t(action === 'retry' ? 'confirmRetrySelected' : 'confirmDiscardSelected', { count: ids.length });
    let description: string;
    try {
      description = action === 'retry' ? await retryText({ ids }) : t('cannotUndo');
    } catch (error) {
      return failed(error);
    }
    const ok = await confirmDialog({
      title,
      description,
      confirmLabel: t(action === 'retry' ? 'retry' : 'discard'),
      danger: action === 'discard',
    });
    if (!ok) return;
    try {
      if (action === 'retry') retried(ids.length, (await retry.mutateAsync({ ids })).retried);
      else done('discarded', (await discard.mutateAsync({ ids })).discarded);
    } catch (error) {
      failed(error);
    }
  };
  const toggle = (id: number) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  const allOnPage = selectable.length > 0 && selectable.every((j) => selected.has(j.id));

  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      {invalid.length > 0 && (
        <p role="alert" data-testid="bad-filter" className="rounded border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900">
          {invalid.map((i) => t('badFilter', { key: i.key, value: i.value })).join(' ')}
        </p>
      )}
      <Card className="grid grid-cols-1 gap-3 text-sm sm:grid-cols-2 lg:grid-cols-4" aria-label={t('filters')}>
        <Field id="f-company" label={t('company')}>
          <select id="f-company" className={INPUT} value={filter.companyId ?? ''} onChange={(e) => set({ companyId: e.target.value || undefined })}>
            <option value="">{tc('all')}</option>
            {facets.data?.companies.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </Field>
        <Field id="f-task" label={t('task')}>
          <select id="f-task" className={INPUT} value={filter.task ?? ''} onChange={(e) => set({ task: e.target.value || undefined })}>
            <option value="">{tc('all')}</option>
            {facets.data?.tasks.map((x) => (
              <option key={x} value={x}>
                {taskName(x)}
              </option>
            ))}
          </select>
        </Field>
        <Field id="f-kind" label={t('errorKind')}>
          <select
            id="f-kind"
            className={INPUT}
            value={filter.errorKind ?? ''}
            onChange={(e) => set({ errorKind: (e.target.value || undefined) as Filter['errorKind'] })}
          >
            <option value="">{tc('all')}</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {t(`kind.${k}`)}
              </option>
            ))}
          </select>
        </Field>
        <Field id="f-code" label={t('errorCode')}>
          <select id="f-code" className={INPUT} value={filter.errorCode ?? ''} onChange={(e) => set({ errorCode: e.target.value || undefined })}>
            <option value="">{tc('all')}</option>
            {facets.data?.errorCodes.map((c) => (
              <option key={c.code} value={c.code}>
                {c.code} ({num(c.n)})
              </option>
            ))}
          </select>
        </Field>
        <div className="sm:col-span-1 lg:col-span-2">
          <DateInput
            id="f-from"
            label={t('from')}
            value={filter.fromDay ?? ''}
            fromYear={new Date().getUTCFullYear() - 3}
            toYear={new Date().getUTCFullYear()}
            onChange={(v) => set({ fromDay: v || undefined })}
          />
        </div>
        <div className="sm:col-span-1 lg:col-span-2">
          <DateInput
            id="f-to"
            label={t('to')}
            value={filter.toDay ?? ''}
            fromYear={new Date().getUTCFullYear() - 3}
            toYear={new Date().getUTCFullYear()}
            onChange={(v) => set({ toDay: v || undefined })}
          />
        </div>
        <Field id="f-q" label={t('errorText')} className="lg:col-span-2">
          <input id="f-q" type="search" className={INPUT} value={q} onChange={(e) => setQ(e.target.value)} />
        </Field>
        {/* Two choices shown whole (a list cut its longer one short): radio buttons, not a list. */}
        <fieldset className="lg:col-span-2">
          <legend className="font-medium text-slate-800">{t('show')}</legend>
          <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1">
            {(['failed', 'superseded'] as const).map((v) => (
              <label key={v} className="inline-flex items-center gap-2">
                <input type="radio" name="f-view" value={v} data-testid={`view-${v}`} checked={view === v} onChange={() => setView(v)} className="h-4 w-4" />
                {t(v === 'failed' ? 'viewFailed' : 'viewSuperseded')}
              </label>
            ))}
          </div>
        </fieldset>
      </Card>
      <div className="flex flex-wrap items-center gap-3">
        <span className="font-semibold" aria-live="polite">
          <span data-testid="failed-total" data-count={total}>
            {t(view === 'superseded' ? 'totalSuperseded' : 'total', { count: total })}
          </span>
        </span>
        {view === 'superseded' ? (
          <span className="text-sm text-slate-700">{t('supersededText')}</span>
        ) : (
          <>
            <Button disabled={total === 0 || busy} onClick={() => void confirmAll('retry')}>
              {t('retryAll', { count: num(total) })}
            </Button>
            <Button variant="danger" disabled={total === 0 || busy} onClick={() => void confirmAll('discard')}>
              {t('discardAll', { count: num(total) })}
            </Button>
          </>
        )}
      </div>
      {view === 'failed' && selected.size > 0 && (
        <div data-testid="selection-bar" className="flex flex-wrap items-center gap-3 rounded-lg border border-indigo-200 bg-indigo-50 p-2 text-sm">
          <span aria-live="polite" data-testid="selected-count">
            {t('selected', { count: selected.size })}
          </span>
          <Button disabled={busy} onClick={() => void act('retry', [...selected])}>
            {t('retrySelected')}
          </Button>
          <Button variant="danger" disabled={busy} onClick={() => void act('discard', [...selected])}>
            {t('discardSelected')}
          </Button>
          <Button variant="secondary" onClick={() => setSelected(new Set())}>
            {t('clearSelection')}
          </Button>
        </div>
      )}
      <div aria-live="polite" aria-atomic="true">
        {result && (
          <p
            data-testid={result.kind === 'changed' ? 'count-changed' : result.kind === 'error' ? 'action-error' : 'action-result'}
            role={result.kind === 'error' ? 'alert' : undefined}
            className={`text-sm ${result.kind === 'ok' ? 'text-emerald-800' : result.kind === 'error' ? 'text-red-800' : 'text-amber-900'}`}
          >
            {result.text}
          </p>
        )}
      </div>
      {list.error && (
        <p role="alert" className="text-red-800">
          {errorText(list.error)}
        </p>
      )}
      <Table data-testid="failed-table" caption={t('tableCaption')} className={STACK_ON_PHONE}>
        <THead>
          <tr>
            {view === 'failed' && (
              <Th className="w-8">
                <input
                  type="checkbox"
                  aria-label={t('selectAll')}
                  checked={allOnPage}
                  disabled={selectable.length === 0}
                  onChange={() => setSelected(allOnPage ? new Set() : new Set(selectable.map((j) => j.id)))}
                  className="h-4 w-4"
                />
              </Th>
            )}
            <Th>{t('job')}</Th>
            <Th>{t('task')}</Th>
            <Th>{t('company')}</Th>
            <Th>{t('error')}</Th>
            <Th>{t('failedAt')}</Th>
            <Th>{t('actions')}</Th>
          </tr>
        </THead>
        <tbody>
          {rows.map((j) => (
            <tr key={j.id} data-testid="failed-row" data-job-id={j.id} className={`border-t border-slate-100 ${selected.has(j.id) ? 'bg-indigo-50' : ''}`}>
              {view === 'failed' && (
                <Td>
                  {!j.supersededBy && (
                    <input
                      type="checkbox"
                      aria-label={t('select', { id: String(j.id) })}
                      checked={selected.has(j.id)}
                      onChange={() => toggle(j.id)}
                      className="h-4 w-4"
                    />
                  )}
                </Td>
              )}
              <Td data-label={t('job')} className="font-mono">
                <Link className="text-indigo-700 underline" href={`/admin/failed/${j.id}${query ? `?back=${encodeURIComponent(query)}` : ''}`}>
                  #{j.id}
                </Link>
              </Td>
              <Td data-label={t('task')} className="break-words">
                {taskName(j.taskName)}
                <div className="font-mono text-xs text-slate-700" translate="no">
                  {j.taskName}
                </div>
                <div className="text-xs text-slate-700">
                  <span translate="no">{j.queue}</span> · {t('attemptsCount', { count: j.attempts })}
                </div>
              </Td>
              <Td data-label={t('company')} translate="no">
                {j.companyName ?? '—'}
              </Td>
              <Td data-label={t('error')} className="min-w-0 [overflow-wrap:anywhere]">
                {j.supersededBy ? (
                  <div data-testid="superseded-by" className="text-slate-800">
                    {superseded(j.supersededBy)}{' '}
                    <span className="font-mono text-xs text-slate-700" translate="no">
                      {j.supersededBy.key}
                    </span>
                  </div>
                ) : (
                  <>
                    <span className="font-mono text-red-800" translate="no">
                      {j.lastErrorCode ?? t('unknownCode')}
                    </span>
                    {j.lastErrorKind && (KINDS as readonly string[]).includes(j.lastErrorKind) && (
                      <span className="text-xs"> ({t(`kind.${j.lastErrorKind as (typeof KINDS)[number]}`)})</span>
                    )}
                    {j.lastError && (
                      <div className="line-clamp-2 text-xs text-slate-700" lang="en" translate="no">
                        {j.lastError}
                      </div>
                    )}
                  </>
                )}
              </Td>
              <Td data-label={t('failedAt')}>{when(j.finishedAt)}</Td>
              <Td data-label={t('actions')}>
                {!j.supersededBy && (
                  <div className="flex flex-wrap gap-1">
                    <Button variant="secondary" disabled={busy} aria-label={t('retryOne', { id: String(j.id) })} onClick={() => void act('retry', [j.id])}>
                      {t('retry')}
                    </Button>
                    <Button variant="secondary" disabled={busy} aria-label={t('discardOne', { id: String(j.id) })} onClick={() => void act('discard', [j.id])}>
                      {t('discard')}
                    </Button>
                  </div>
                )}
              </Td>
            </tr>
          ))}
        </tbody>
      </Table>
      <Pager
        offset={offset}
        pageSize={PAGE}
        total={total}
        onOffset={(o) => {
          setOffset(o);
          setSelected(new Set());
          setResult(null);
        }}
      />
    </div>
  );
}
