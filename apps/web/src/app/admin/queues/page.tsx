'use client';
import { useQuery } from '@tanstack/react-query';
import { Card, L, StatusLabel, fmtTime } from '../../../components/ui.tsx';
import { EmailAccountPanel } from '../../../components/delivery.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

function age(s: number | null): string {
  if (s === null) return '—';
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** A 60-bar chart of finished attempts per minute. */
function Chart({ points }: { points: Array<{ minute: Date; done: number; failed: number }> }) {
  const now = Math.floor(Date.now() / 60_000);
  const bars = Array.from({ length: 60 }, (_, i) => {
    const m = now - 59 + i;
    const p = points.find((x) => Math.floor(new Date(x.minute).getTime() / 60_000) === m);
    return { done: p?.done ?? 0, failed: p?.failed ?? 0 };
  });
  const max = Math.max(1, ...bars.map((b) => b.done + b.failed));
  return (
    <div className="flex h-16 items-end gap-px" aria-label="throughput, last 60 minutes">
      {bars.map((b, i) => (
        <div key={i} className="flex flex-1 flex-col justify-end" title={`${b.done} done · সম্পন্ন, ${b.failed} not done · অসম্পন্ন`}>
          <div className="bg-red-400" style={{ height: `${(b.failed / max) * 64}px` }} />
          <div className="bg-emerald-500" style={{ height: `${(b.done / max) * 64}px` }} />
        </div>
      ))}
    </div>
  );
}

export default function QueuesPage() {
  const trpc = useTRPC();
  const data = useQuery({ ...trpc.admin.queues.queryOptions(), refetchInterval: 5_000 });
  const stuck = useQuery({ ...trpc.admin.stuck.queryOptions(), refetchInterval: 10_000 });
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L en="Queues" bn="কিউ" /></h1>
      <EmailAccountPanel />
      {data.data?.limits.length || data.data?.rates.length ? (
        <Card><h2 className="font-semibold"><L en="Limits in use" bn="সীমা ব্যবহার" /></h2>
          <ul className="text-sm">
            {data.data.limits.map((l) => <li key={`c-${l.key}`} data-testid={`concurrency-${l.key}`}>{l.key}: <b>{l.inUse}/{l.max}</b> <L en="in flight" bn="চলমান" /></li>)}
            {data.data.rates.map((r) => <li key={`r-${r.key}`} data-testid={`rate-${r.key}`}>{r.key}: <b>{r.inUsePerSecond.toFixed(1)}/s <L en="of" bn="এর মধ্যে" /> {r.perSecond}/s</b> (<L en={`last ${data.data.rateWindowSeconds} s`} bn={`গত ${data.data.rateWindowSeconds} সেকেন্ড`} />)</li>)}
          </ul></Card>
      ) : null}
      <div className="grid gap-4 md:grid-cols-2">
        {data.data?.queues.map((q) => {
          const limit = data.data.limitDefs.find((d) => d.queue === q.queue)?.limits;
          return (
            <Card key={q.queue}>
              <h2 className="font-semibold">{q.queue}</h2>
              <dl className="my-2 grid grid-cols-3 gap-2 text-sm sm:grid-cols-6">
                {(['queued', 'running', 'retrying', 'failed', 'done'] as const).map((s) => <div key={s} data-count={s}><dt className="text-slate-500"><StatusLabel status={s} /></dt><dd className="font-medium">{q.counts[s].toLocaleString('en-US')}</dd></div>)}
                {/* Not due yet: waiting on purpose (e.g. the approval reminders), not stuck. */}
                <div data-count="delayed"><dt className="text-slate-500"><StatusLabel status="delayed" /></dt><dd className="font-medium">{q.delayed.toLocaleString('en-US')}</dd></div>
              </dl>
              <p className="text-sm"><L en="Oldest waiting" bn="সবচেয়ে পুরনো অপেক্ষা" />: {age(q.oldestWaitingSeconds)}</p>
              {limit && <p className="text-sm text-slate-600"><L en="limit" bn="সীমা" />: {limit.concurrency ? <>{limit.concurrency.max} <L en="in flight" bn="চলমান" /></> : ''} {limit.rate ? `· ${limit.rate.perSecond}/s` : ''}</p>}
              <Chart points={q.perMinute} />
            </Card>
          );
        })}
      </div>
      <Card>
        <h2 className="font-semibold"><L en="Delayed jobs (not due yet)" bn="নির্ধারিত সময়ের অপেক্ষায় থাকা কাজ" /></h2>
        {data.data?.delayed.length === 0 && <p className="text-sm text-slate-500">None · নেই</p>}
        <ul className="text-sm">{data.data?.delayed.map((d) => (
          <li key={`${d.queue}-${d.task}-${new Date(d.dueAt).toISOString()}`} data-testid="delayed-group">
            <b>{d.n.toLocaleString('en-US')}</b> {d.task} <L en="due at" bn="নির্ধারিত" /> <time dateTime={new Date(d.dueAt).toISOString()}>{fmtTime(d.dueAt)}</time> <span className="text-slate-500">({d.queue})</span>
          </li>
        ))}</ul>
        <p className="mt-1 text-xs text-slate-500"><L en="Recurring jobs (payroll, sweeper, bank poll) are on the Schedules page." bn="নিয়মিত কাজ শিডিউল পাতায়।" /></p>
      </Card>
      <Card>
        <h2 className="font-semibold"><L en="Stuck jobs (running > 10 min, no heartbeat, or due but untaken)" bn="আটকে থাকা কাজ" /></h2>
        {stuck.data?.length === 0 && <p className="text-sm text-slate-500">None · নেই</p>}
        <ul className="text-sm">{stuck.data?.map((j) => (
          <li key={j.id} data-testid="stuck-job" data-job-id={j.id}>#{j.id} {j.taskName} ({j.status}: {j.reason}) · <L en="worker" bn="ওয়ার্কার" /> {j.workerId ?? '—'} · <L en="since" bn="থেকে" /> {fmtTime(j.startedAt)}
            {' · '}<L en="last heartbeat" bn="শেষ হার্টবিট" />{' '}
            {j.heartbeatAt ? <time data-testid="stuck-heartbeat" dateTime={new Date(j.heartbeatAt).toISOString()}>{fmtTime(j.heartbeatAt)}</time> : '—'}
          </li>
        ))}</ul>
      </Card>
    </div>
  );
}
