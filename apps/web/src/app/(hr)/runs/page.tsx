'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, Card, L, StatusLabel, fmtTime } from '../../../components/ui.tsx';
import { AddressesToFix, RunDeliveryCounts } from '../../../components/delivery.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

export default function RunsPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const runs = useQuery({ ...trpc.runs.list.queryOptions(), refetchInterval: 5_000 });
  const approve = useMutation(trpc.runs.approve.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.runs.list.queryKey() }) }));
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L en="Payroll runs" bn="বেতন রান" /></h1>
      {runs.isLoading && <p><L en="Loading…" bn="লোড হচ্ছে…" /></p>}
      <AddressesToFix />
      {runs.data?.length === 0 && <Card>No payroll runs yet · এখনও কোনো বেতন রান নেই</Card>}
      {runs.data?.map((run) => {
        const pct = run.employeeCount ? (run.sent / run.employeeCount) * 100 : 0;
        const failedPct = run.employeeCount ? (run.failed / run.employeeCount) * 100 : 0;
        return (
          <Card key={run.id}>
            <div data-testid="run" data-run-id={run.id} className="space-y-3">
              <div className="flex flex-wrap items-baseline justify-between gap-2">
                <h2 className="text-lg font-semibold">{run.month} <span className="text-sm font-normal text-slate-500">(<StatusLabel status={run.status} />)</span></h2>
                <span className="text-sm text-slate-500"><L en="Started" bn="শুরু" /> {fmtTime(run.startedAt)}</span>
              </div>
              <div className="flex h-3 w-full overflow-hidden rounded bg-slate-200" role="progressbar" aria-valuenow={Math.round(pct)} aria-valuemin={0} aria-valuemax={100}>
                <div className="bg-emerald-500" style={{ width: `${pct}%` }} />
                <div className="bg-red-500" style={{ width: `${failedPct}%` }} />
              </div>
              <div>
                <p data-testid="run-line" className="text-xl font-semibold">{run.line}</p>
                <p lang="bn" data-testid="run-line-bn" className="text-slate-600">{run.lineBn}</p>
              </div>
              {/* Slips per stage: they add up to the employee count. */}
              <dl data-testid="run-stages" className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-5">
                {(['done', 'running', 'queued', 'retrying', 'failed'] as const).map((s) => (
                  <div key={s} data-stage={s}><dt className="text-slate-500"><StatusLabel status={s} /></dt><dd className="font-medium">{run.slips[s].toLocaleString('en-US')}</dd></div>
                ))}
              </dl>
              <RunDeliveryCounts runId={run.id} />
              <p className="text-sm"><L en="Throughput now" bn="বর্তমান গতি" />: <b>{run.throughputPerSecond.toFixed(1)}</b> <L en="slips/s" bn="স্লিপ/সেকেন্ড" /></p>
              <div className={`text-sm ${run.eta.kind === 'late' ? 'font-semibold text-red-700' : 'text-slate-700'}`}>
                <p data-testid="run-eta">{run.eta.text}</p>
                <p lang="bn">{run.eta.textBn}</p>
              </div>
              <div className="flex flex-wrap items-center gap-3">
                {run.approvedAt ? (
                  <span className="text-sm text-emerald-700"><L en="Approved" bn="অনুমোদিত" /> {fmtTime(run.approvedAt)}</span>
                ) : (
                  <Button disabled={approve.isPending} onClick={() => approve.mutate({ runId: run.id })}><L en="Approve payroll" bn="বেতন অনুমোদন" /></Button>
                )}
                {run.remindersAt && (
                  <span data-testid="run-reminders" className="text-sm">
                    <L en="Reminder emails go at" bn="রিমাইন্ডার ইমেইল যাবে" /> {fmtTime(run.remindersAt)}
                    {approve.data && approve.variables?.runId === run.id && <> ({approve.data.reminders} <L en="emails" bn="টি ইমেইল" />)</>}
                  </span>
                )}
              </div>
            </div>
          </Card>
        );
      })}
    </div>
  );
}
