'use client';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Button, Card, L, fmtTime } from '../../../components/ui.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

interface Filter { companyId?: string; task?: string; errorCode?: string; from?: Date; to?: Date; q?: string }

function clean(f: Filter): Filter {
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined && v !== '')) as Filter;
}

export default function FailedJobsPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [filter, setFilter] = useState<Filter>({});
  const [offset, setOffset] = useState(0);
  const [openJob, setOpenJob] = useState<number | null>(null);
  const f = clean(filter);
  const facets = useQuery(trpc.admin.failedFacets.queryOptions());
  const list = useQuery({ ...trpc.admin.failedList.queryOptions({ ...f, limit: 50, offset }), placeholderData: keepPreviousData });
  const job = useQuery({ ...trpc.admin.job.queryOptions({ id: openJob ?? 0 }), enabled: openJob !== null });
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.admin.pathKey() });
  const retry = useMutation(trpc.admin.retry.mutationOptions({ onSuccess: refresh }));
  const retryAll = useMutation(trpc.admin.retryMatching.mutationOptions({ onSuccess: refresh }));
  const discard = useMutation(trpc.admin.discard.mutationOptions({ onSuccess: refresh }));
  const discardAll = useMutation(trpc.admin.discardMatching.mutationOptions({ onSuccess: refresh }));
  const total = list.data?.total ?? 0;
  const set = (patch: Filter) => { setFilter({ ...filter, ...patch }); setOffset(0); };
  const input = 'mt-1 block rounded border border-slate-300 px-2 py-1';
  const message = retryAll.data ? `Retried ${retryAll.data.retried} jobs` : discardAll.data ? `Discarded ${discardAll.data.discarded} jobs` : retry.data ? `Retried ${retry.data.retried}` : discard.data ? `Discarded ${discard.data.discarded}` : null;
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L en="Failed jobs (DLQ)" bn="ব্যর্থ কাজ" /></h1>
      <Card className="flex flex-wrap items-end gap-3 text-sm">
        <label><L en="Company" bn="কোম্পানি" />
          <select aria-label="company" className={input} value={filter.companyId ?? ''} onChange={(e) => set({ companyId: e.target.value || undefined })}>
            <option value="">all</option>{facets.data?.companies.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
          </select></label>
        <label><L en="Task" bn="কাজ" />
          <select aria-label="task" className={input} value={filter.task ?? ''} onChange={(e) => set({ task: e.target.value || undefined })}>
            <option value="">all</option>{facets.data?.tasks.map((t) => <option key={t} value={t}>{t}</option>)}
          </select></label>
        <label><L en="Error kind" bn="ত্রুটির ধরন" />
          <select aria-label="error code" className={input} value={filter.errorCode ?? ''} onChange={(e) => set({ errorCode: e.target.value || undefined })}>
            <option value="">all</option>{facets.data?.errorCodes.map((c) => <option key={c.code} value={c.code}>{c.code} ({c.n})</option>)}
          </select></label>
        <label><L en="From" bn="থেকে" /><input aria-label="from" type="date" className={input} onChange={(e) => set({ from: e.target.value ? new Date(e.target.value) : undefined })} /></label>
        <label><L en="To" bn="পর্যন্ত" /><input aria-label="to" type="date" className={input} onChange={(e) => set({ to: e.target.value ? new Date(new Date(e.target.value).getTime() + 86_400_000) : undefined })} /></label>
        <label><L en="Error text" bn="ত্রুটি লেখা" /><input aria-label="error text" className={input} value={filter.q ?? ''} onChange={(e) => set({ q: e.target.value || undefined })} /></label>
      </Card>
      <div className="flex flex-wrap items-center gap-3">
        <span data-testid="failed-total" className="font-semibold">{total.toLocaleString('en-US')} failed</span>
        <Button disabled={total === 0 || retryAll.isPending} onClick={() => { if (window.confirm(`Retry all ${total} matching jobs? · ${total}টি কাজ আবার চালাবেন?`)) retryAll.mutate(f); }}>
          <L en={`Retry all ${total} matching`} bn="সব আবার চালান" /></Button>
        <Button variant="danger" disabled={total === 0 || discardAll.isPending} onClick={() => { if (window.confirm(`Discard all ${total} matching jobs? This cannot be undone. · ${total}টি কাজ বাতিল করবেন?`)) discardAll.mutate(f); }}>
          <L en={`Discard all ${total} matching`} bn="সব বাতিল" /></Button>
        {message && <span data-testid="action-result" className="text-sm text-emerald-700">{message}</span>}
      </div>
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
        <table className="min-w-full text-sm">
          <thead className="bg-slate-50 text-left text-slate-600"><tr><th className="p-2">Job</th><th className="p-2">Task</th><th className="p-2">Company</th><th className="p-2">Error</th><th className="p-2">Failed at</th><th className="p-2" /></tr></thead>
          <tbody>
            {list.data?.rows.map((j) => (
              <tr key={j.id} data-testid="failed-row" className="border-t border-slate-100 align-top">
                <td className="p-2 font-mono"><button className="text-indigo-700 underline" onClick={() => setOpenJob(j.id)}>#{j.id}</button></td>
                <td className="p-2">{j.taskName}<div className="text-xs text-slate-500">{j.queue} · {j.attempts} attempts</div></td>
                <td className="p-2">{j.companyName ?? '—'}</td>
                <td className="p-2"><span className="font-mono text-red-700">{j.lastErrorCode ?? 'unknown'}</span> <span className="text-xs">({j.lastErrorKind ?? '?'})</span><div className="max-w-md truncate text-xs text-slate-600">{j.lastError}</div></td>
                <td className="p-2 whitespace-nowrap">{fmtTime(j.finishedAt)}</td>
                <td className="p-2 whitespace-nowrap space-x-1">
                  <Button variant="secondary" onClick={() => retry.mutate({ ids: [j.id] })}>Retry</Button>
                  <Button variant="secondary" onClick={() => { if (window.confirm(`Discard job #${j.id}? (1 job)`)) discard.mutate({ ids: [j.id] }); }}>Discard</Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="flex items-center gap-3 text-sm">
        <Button variant="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - 50))}>← Prev</Button>
        <span>{total === 0 ? 0 : offset + 1}–{Math.min(offset + 50, total)} / {total}</span>
        <Button variant="secondary" disabled={offset + 50 >= total} onClick={() => setOffset(offset + 50)}>Next →</Button>
      </div>
      {openJob !== null && job.data && (
        <Card>
          <div className="flex items-center justify-between"><h2 className="font-semibold">Job #{job.data.id} · {job.data.taskName} · {job.data.status}</h2><button className="underline" onClick={() => setOpenJob(null)}>close</button></div>
          <p className="text-xs text-slate-500">{job.data.idempotencyKey} · {job.data.attempts}/{job.data.maxAttempts} attempts</p>
          <pre className="mt-2 overflow-x-auto rounded bg-slate-50 p-2 text-xs">{JSON.stringify(job.data.payload, null, 2)}</pre>
          <ol className="mt-2 space-y-2 text-xs">
            {job.data.attemptLog.map((a) => (
              <li key={a.attempt} className="rounded border border-slate-100 p-2">
                <b>#{a.attempt}</b> {a.outcome} · {fmtTime(a.startedAt)} · {a.durationMs ?? '—'} ms · {a.workerId} {a.retryDelayMs !== null && `· retry in ${a.retryDelayMs} ms`}
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
