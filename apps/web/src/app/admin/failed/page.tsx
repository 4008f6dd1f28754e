'use client';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { TRPCClientError } from '@trpc/client';
import type { ErrorKind } from '@beton/dashboard/types';
import { useState } from 'react';
import { Button, Card, L, Pager, StatusLabel, fmtTime } from '../../../components/ui.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

/** Days are 'YYYY-MM-DD' in Dhaka time, as the times on this page; the server reads them so. */
interface Filter { companyId?: string; task?: string; errorCode?: string; errorKind?: ErrorKind; fromDay?: string; toDay?: string; q?: string }

/** Every error kind the server filters by, in both languages. */
const ERROR_KIND_LABELS: Record<ErrorKind, { en: string; bn: string }> = {
  transient: { en: 'transient (retried)', bn: 'সাময়িক' },
  permanent: { en: 'permanent', bn: 'স্থায়ী' },
};

function isConflict(error: unknown): boolean {
  return error instanceof TRPCClientError && (error.data as { code?: string } | undefined)?.code === 'CONFLICT';
}

const PAGE = 50;

function clean(f: Filter): Filter {
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined && v !== '')) as Filter;
}

export default function FailedJobsPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [filter, setFilter] = useState<Filter>({});
  const [offset, setOffset] = useState(0);
  const [openJob, setOpenJob] = useState<number | null>(null);
  // 'superseded': jobs closed because the employee's slip was delivered by another attempt (R13); never retried.
  const [view, setView] = useState<'failed' | 'superseded'>('failed');
  const f = clean(filter);
  const facets = useQuery(trpc.admin.failedFacets.queryOptions());
  const list = useQuery({ ...trpc.admin.failedList.queryOptions({ ...f, limit: PAGE, offset, view }), placeholderData: keepPreviousData });
  const job = useQuery({ ...trpc.admin.job.queryOptions({ id: openJob ?? 0 }), enabled: openJob !== null });
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.admin.pathKey() });
  const retry = useMutation(trpc.admin.retry.mutationOptions({ onSuccess: refresh }));
  const retryAll = useMutation(trpc.admin.retryMatching.mutationOptions({ onSuccess: refresh }));
  const discard = useMutation(trpc.admin.discard.mutationOptions({ onSuccess: refresh }));
  const discardAll = useMutation(trpc.admin.discardMatching.mutationOptions({ onSuccess: refresh }));
  const total = list.data?.total ?? 0;
  const set = (patch: Filter) => { setFilter({ ...filter, ...patch }); setOffset(0); };
  const input = 'mt-1 block rounded border border-slate-300 px-2 py-1';
  const [changed, setChanged] = useState<number | null>(null);
  // Retry / discard all that match: the server acts only if the filter still matches the
  // count confirmed here; otherwise (CONFLICT) the page shows the new count and asks again.
  const confirmAll = async (
    mutate: (input: { filter: Filter; expected: number; matchAll?: true }) => Promise<unknown>,
    question: (n: number) => string,
  ) => {
    setChanged(null);
    let expected = total;
    for (;;) {
      if (expected === 0 || !window.confirm(question(expected))) return;
      try {
        // No condition means every failed job: the API wants that said (matchAll).
        await mutate({ filter: f, expected, ...(Object.keys(f).length === 0 ? { matchAll: true as const } : {}) });
        return;
      } catch (error) {
        if (!isConflict(error)) return; // the mutation shows its error
        expected = (await list.refetch()).data?.total ?? 0;
        setChanged(expected);
      }
    }
  };
  const message = retryAll.data ? { en: `Retried ${retryAll.data.retried} jobs`, bn: `${retryAll.data.retried}টি কাজ আবার চালানো হয়েছে` }
    : discardAll.data ? { en: `Discarded ${discardAll.data.discarded} jobs`, bn: `${discardAll.data.discarded}টি কাজ বাতিল হয়েছে` }
    : retry.data ? { en: `Retried ${retry.data.retried}`, bn: `${retry.data.retried}টি আবার চালানো হয়েছে` }
    : discard.data ? { en: `Discarded ${discard.data.discarded}`, bn: `${discard.data.discarded}টি বাতিল হয়েছে` } : null;
  const error = [retryAll, discardAll, retry, discard].find((m) => m.error && !isConflict(m.error))?.error;
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L en="Failed jobs (DLQ)" bn="ব্যর্থ কাজ" /></h1>
      <Card className="flex flex-wrap items-end gap-3 text-sm">
        <label><L en="Company" bn="কোম্পানি" />
          <select aria-label="company" className={input} value={filter.companyId ?? ''} onChange={(e) => set({ companyId: e.target.value || undefined })}>
            <option value="">all · সব</option>{facets.data?.companies.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
          </select></label>
        <label><L en="Task" bn="কাজ" />
          <select aria-label="task" className={input} value={filter.task ?? ''} onChange={(e) => set({ task: e.target.value || undefined })}>
            <option value="">all · সব</option>{facets.data?.tasks.map((t) => <option key={t} value={t}>{t}</option>)}
          </select></label>
        <label><L en="Error kind" bn="ত্রুটির ধরন" />
          <select aria-label="error kind" className={input} value={filter.errorKind ?? ''} onChange={(e) => set({ errorKind: (e.target.value || undefined) as Filter['errorKind'] })}>
            <option value="">all · সব</option>{Object.entries(ERROR_KIND_LABELS).map(([kind, k]) => <option key={kind} value={kind}>{k.en} · {k.bn}</option>)}
          </select></label>
        <label><L en="Error code" bn="ত্রুটির কোড" />
          <select aria-label="error code" className={input} value={filter.errorCode ?? ''} onChange={(e) => set({ errorCode: e.target.value || undefined })}>
            <option value="">all · সব</option>{facets.data?.errorCodes.map((c) => <option key={c.code} value={c.code}>{c.code} ({c.n})</option>)}
          </select></label>
        <label><L en="From (Dhaka time)" bn="থেকে (ঢাকা সময়)" /><input aria-label="from" type="date" className={input} value={filter.fromDay ?? ''} max={filter.toDay} onChange={(e) => set({ fromDay: e.target.value || undefined })} /></label>
        <label><L en="To, inclusive (Dhaka time)" bn="পর্যন্ত (ঢাকা সময়)" /><input aria-label="to" type="date" className={input} value={filter.toDay ?? ''} min={filter.fromDay} onChange={(e) => set({ toDay: e.target.value || undefined })} /></label>
        <label><L en="Error text" bn="ত্রুটি লেখা" /><input aria-label="error text" className={input} value={filter.q ?? ''} onChange={(e) => set({ q: e.target.value || undefined })} /></label>
        <label><L en="Show" bn="দেখান" />
          <select aria-label="view" className={input} value={view} onChange={(e) => { setView(e.target.value as typeof view); setOffset(0); }}>
            <option value="failed">failed (DLQ) · ব্যর্থ</option>
            <option value="superseded">superseded: slip delivered by another attempt · অন্য চেষ্টায় পৌঁছেছে</option>
          </select></label>
      </Card>
      <div className="flex flex-wrap items-center gap-3">
        {view === 'superseded' ? (
          <span className="font-semibold"><span data-testid="failed-total">{total.toLocaleString('en-US')} superseded</span> <span lang="bn" className="opacity-70">· {total.toLocaleString('en-US')}টি অন্য চেষ্টায় সম্পন্ন</span>
            <span className="ml-2 text-sm font-normal text-slate-600"><L en="Their slips were delivered by another attempt: nothing to retry." bn="এদের স্লিপ অন্য চেষ্টায় পৌঁছেছে: আবার চালানোর কিছু নেই।" /></span></span>
        ) : <>
        <span className="font-semibold"><span data-testid="failed-total">{total.toLocaleString('en-US')} failed</span> <span lang="bn" className="opacity-70">· {total.toLocaleString('en-US')}টি ব্যর্থ</span></span>
        <Button disabled={total === 0 || retryAll.isPending} onClick={() => void confirmAll(retryAll.mutateAsync, (n) => `Retry all ${n} matching jobs? · ${n}টি কাজ আবার চালাবেন?`)}>
          <L en={`Retry all ${total} matching`} bn="সব আবার চালান" /></Button>
        <Button variant="danger" disabled={total === 0 || discardAll.isPending} onClick={() => void confirmAll(discardAll.mutateAsync, (n) => `Discard all ${n} matching jobs? This cannot be undone. · ${n}টি কাজ বাতিল করবেন? এটি ফেরানো যাবে না।`)}>
          <L en={`Discard all ${total} matching`} bn="সব বাতিল" /></Button>
        </>}
        {changed !== null && <span data-testid="count-changed" role="status" className="text-sm text-amber-700">
          <L en={`The matching jobs changed: now ${changed}`} bn={`মিল থাকা কাজ বদলেছে: এখন ${changed}টি`} /></span>}
        {message && <span className="text-sm text-emerald-700"><span data-testid="action-result">{message.en}</span> <span lang="bn" className="opacity-70">· {message.bn}</span></span>}
        {error && <span role="alert" className="text-sm text-red-700">{error.message}</span>}
      </div>
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
        <table className="min-w-full text-sm">
          <thead className="bg-slate-50 text-left text-slate-600"><tr>
            <th className="p-2"><L en="Job" bn="কাজ" /></th><th className="p-2"><L en="Task" bn="ধরন" /></th><th className="p-2"><L en="Company" bn="কোম্পানি" /></th>
            <th className="p-2"><L en="Error" bn="ত্রুটি" /></th><th className="p-2"><L en="Failed at (Dhaka)" bn="ব্যর্থ হয়েছে (ঢাকা)" /></th><th className="p-2" /></tr></thead>
          <tbody>
            {list.data?.rows.map((j) => (
              <tr key={j.id} data-testid="failed-row" className="border-t border-slate-100 align-top">
                <td className="p-2 font-mono"><button className="text-indigo-700 underline" onClick={() => setOpenJob(j.id)}>#{j.id}</button></td>
                <td className="p-2">{j.taskName}<div className="text-xs text-slate-500">{j.queue} · {j.attempts} <L en="attempts" bn="চেষ্টা" /></div></td>
                <td className="p-2">{j.companyName ?? '—'}</td>
                <td className="p-2">{j.supersededBy && <div data-testid="superseded-by" className="text-slate-700"><L en={`superseded by ${j.supersededBy.label}`} bn={`${j.supersededBy.label} দ্বারা প্রতিস্থাপিত`} /> <span className="font-mono text-xs text-slate-500">{j.supersededBy.key}</span></div>}
                  <span className="font-mono text-red-700">{j.lastErrorCode ?? (j.supersededBy ? '' : 'unknown')}</span> <span className="text-xs">({j.lastErrorKind ? <L en={j.lastErrorKind} bn={ERROR_KIND_LABELS[j.lastErrorKind as ErrorKind]?.bn ?? ''} /> : '?'})</span><div className="max-w-md truncate text-xs text-slate-600">{j.lastError}</div></td>
                <td className="p-2 whitespace-nowrap">{fmtTime(j.finishedAt)}</td>
                <td className="p-2 whitespace-nowrap space-x-1">
                  {!j.supersededBy && <>
                  <Button variant="secondary" onClick={() => retry.mutate({ ids: [j.id] })}><L en="Retry" bn="আবার চালান" /></Button>
                  <Button variant="secondary" onClick={() => { if (window.confirm(`Discard job #${j.id}? (1 job) · কাজ #${j.id} বাতিল করবেন?`)) discard.mutate({ ids: [j.id] }); }}><L en="Discard" bn="বাতিল" /></Button>
                  </>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager offset={offset} pageSize={PAGE} total={total} onOffset={setOffset} />
      {openJob !== null && job.data && (
        <Card>
          <div className="flex items-center justify-between"><h2 className="font-semibold"><L en="Job" bn="কাজ" /> #{job.data.id} · {job.data.taskName} · <StatusLabel status={job.data.status} /></h2><button className="underline" onClick={() => setOpenJob(null)}><L en="close" bn="বন্ধ" /></button></div>
          <p className="text-xs text-slate-500">{job.data.idempotencyKey} · {job.data.attempts}/{job.data.maxAttempts} <L en="attempts" bn="চেষ্টা" /></p>
          {job.data.supersededBy && <p className="text-sm text-slate-700"><L en={`Superseded by ${job.data.supersededBy.label} (${job.data.supersededBy.key}): the slip was delivered; it will not be retried.`} bn={`${job.data.supersededBy.label} দ্বারা প্রতিস্থাপিত: স্লিপ পৌঁছেছে; আবার চালানো হবে না।`} /></p>}
          <pre className="mt-2 overflow-x-auto rounded bg-slate-50 p-2 text-xs">{JSON.stringify(job.data.payload, null, 2)}</pre>
          <ol className="mt-2 space-y-2 text-xs">
            {job.data.attemptLog.map((a, i) => (
              <li key={i} className="rounded border border-slate-100 p-2">
                <b>#{a.attempt}</b> <StatusLabel status={a.outcome} /> · {fmtTime(a.startedAt)} · {a.durationMs ?? '—'} ms · {a.workerId} {a.retryDelayMs !== null && <>· <L en={`retry in ${a.retryDelayMs} ms`} bn={`${a.retryDelayMs} ms পরে আবার`} /></>}
                {a.errorMessage && <div className="text-red-700">{a.errorCode}: {a.errorMessage}</div>}
                {a.errorStack && <pre className="mt-1 overflow-x-auto whitespace-pre-wrap text-slate-600">{a.errorStack}</pre>}
              </li>
            ))}
          </ol>
        </Card>
      )}
    </div>
  );
}
