'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { Button, Card, L, StatusLabel, fmtTime } from '../../../components/ui.tsx';
import { AddressesToFix, RunDeliveryCounts } from '../../../components/delivery.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

const STAGES = ['done', 'running', 'queued', 'retrying', 'failed'] as const;
const n = (x: number) => x.toLocaleString('en-US');

/** "02:24" in the company's zone, with the day when it is not today there. */
function at(d: Date | string, timeZone: string): string {
  const date = new Date(d);
  const day = (x: Date) => x.toLocaleDateString('en-CA', { timeZone });
  const time = date.toLocaleTimeString('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return day(date) === day(new Date()) ? time : `${time}, ${date.toLocaleDateString('en-GB', { timeZone, day: 'numeric', month: 'short' })}`;
}

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
        const s = run.schedule;
        const reminderCount = run.reminders.queued + run.reminders.running + run.reminders.retrying + run.reminders.done + run.reminders.failed;
        return (
          <Card key={run.id}>
            <div data-testid="run" data-run-id={run.id} data-status={run.status} className="space-y-3">
              <div className="flex flex-wrap items-baseline justify-between gap-2">
                <h2 className="text-lg font-semibold">{run.month} <span data-testid="run-status" className="text-sm font-normal text-slate-500">(<StatusLabel status={run.status} />{run.completedAt && run.status === 'completed' ? <> · {fmtTime(run.completedAt)}</> : null})</span></h2>
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
              {/* Slips per stage: with "no job" they add up to the employee count. */}
              <dl data-testid="run-stages" className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-6">
                {STAGES.map((st) => (
                  <div key={st} data-stage={st}><dt className="text-slate-500"><StatusLabel status={st} /></dt><dd className="font-medium">{n(run.slips[st])}</dd></div>
                ))}
                {run.withoutJob > 0 && <div data-stage="none"><dt className="text-slate-500"><L en="no job (discarded)" bn="কাজ নেই" /></dt><dd className="font-medium">{n(run.withoutJob)}</dd></div>}
              </dl>
              <RunDeliveryCounts runId={run.id} />
              {run.failed > 0 && (
                <p className="text-sm">
                  <Link data-testid="run-attention" className="font-medium text-red-700 underline" href={`/employees?month=${run.month}&status=failed`}>
                    <L en={`${n(run.failed)} need attention`} bn={`${n(run.failed)}টিতে মনোযোগ দরকার`} />
                  </Link>
                  {' '}<span className="text-slate-500"><L en="(fix the address, then Resend)" bn="(ঠিকানা ঠিক করে আবার পাঠান)" /></span>
                </p>
              )}
              <div className="grid gap-1 text-sm sm:grid-cols-2">
                <p data-testid="run-deadline"><L en="Deadline" bn="সময়সীমা" />: <b>{run.deadlineText}</b> <span className="text-slate-500">({run.timeZone})</span></p>
                <p data-testid="run-rate"><L en="This run's rate" bn="এই রানের গতি" />: <b>{run.throughputPerSecond === null ? '—' : run.throughputPerSecond.toFixed(run.throughputPerSecond < 10 ? 2 : 1)}</b> <L en="slips/s" bn="স্লিপ/সেকেন্ড" /></p>
                <p data-testid="run-start">
                  {s.firstSentAt ? <><L en="First slips went at" bn="প্রথম স্লিপ গেছে" /> <b>{at(s.firstSentAt, run.timeZone)}</b></>
                    : s.expectedStartAt ? <><L en="Slips expected to start" bn="স্লিপ শুরু হবে" /> ≈ <b>{at(s.expectedStartAt, run.timeZone)}</b> ({n(s.slipsAhead ?? 0)} <L en="slips of other companies ahead" bn="টি অন্য কোম্পানির স্লিপ আগে" />)</>
                    : run.remaining > 0 ? <L en="Slips not started yet" bn="স্লিপ এখনও শুরু হয়নি" /> : null}
                </p>
                {s.expectedFinishAt && <p data-testid="run-finish"><L en="Expected to finish" bn="শেষ হবে" /> ≈ <b>{at(s.expectedFinishAt, run.timeZone)}</b></p>}
              </div>
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
                    {run.reminders.queued > 0 || reminderCount === 0 ? (
                      <><L en="Reminder emails go at" bn="রিমাইন্ডার ইমেইল যাবে" /> {fmtTime(run.remindersAt)}
                        {reminderCount > 0 && <> (<span data-testid="run-reminders-delayed">{n(run.reminders.queued)}</span> <L en="delayed until then" bn="টি তখন পর্যন্ত অপেক্ষায়" />)</>}
                        {approve.data && approve.variables?.runId === run.id && reminderCount === 0 && <> ({approve.data.reminders} <L en="emails" bn="টি ইমেইল" />)</>}</>
                    ) : (
                      <><L en="Reminder emails" bn="রিমাইন্ডার ইমেইল" />: {n(run.reminders.done)} <L en="sent" bn="পাঠানো হয়েছে" />{run.reminders.failed > 0 && <>, {n(run.reminders.failed)} <L en="failed" bn="ব্যর্থ" /></>}</>
                    )}
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
