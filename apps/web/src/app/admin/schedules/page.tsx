'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, Card, L } from '../../../components/ui.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

function inZone(d: Date | string, timeZone: string): string {
  return new Date(d).toLocaleString('en-GB', { timeZone, dateStyle: 'medium', timeStyle: 'short' });
}

export default function SchedulesPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const schedules = useQuery(trpc.admin.schedules.queryOptions());
  const runNow = useMutation(trpc.admin.runScheduleNow.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.admin.schedules.queryKey() }) }));
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L en="Schedules" bn="সময়সূচি" /></h1>
      <Card className="overflow-x-auto">
        <table className="min-w-full text-sm">
          <thead className="text-left text-slate-600"><tr><th className="p-2"><L en="Schedule" bn="সময়সূচি" /></th><th className="p-2">Cron</th><th className="p-2"><L en="Time zone" bn="সময় অঞ্চল" /></th><th className="p-2"><L en="Next runs" bn="পরের চালানো" /></th><th className="p-2"><L en="Last run" bn="শেষ চালানো" /></th><th className="p-2" /></tr></thead>
          <tbody>
            {schedules.data?.map((s) => (
              <tr key={s.id} className="border-t border-slate-100 align-top">
                <td className="p-2">{s.label}<div className="text-xs text-slate-500">{s.job}</div></td>
                <td className="p-2"><span className="font-mono">{s.cron}</span>{s.cronFrom && <div className="text-xs text-slate-500"><L en="as the scheduler runs it" bn="শিডিউলার যেভাবে চালায়" />: {s.cronFrom}</div>}</td><td className="p-2">{s.timeZone}</td>
                <td className="p-2">{s.next.map((d) => <div key={String(d)}>{inZone(d, s.timeZone)}</div>)}</td>
                <td className="p-2">{s.lastRun ? inZone(s.lastRun, s.timeZone) : '—'}</td>
                <td className="p-2 whitespace-nowrap">
                  <Button variant="secondary" disabled={runNow.isPending} onClick={() => { if (window.confirm(`Run "${s.label}" now? · এখনই চালাবেন?`)) runNow.mutate({ id: s.id }); }}><L en="Run now" bn="এখনই চালান" /></Button>
                  {runNow.data && runNow.variables?.id === s.id && <div className="text-xs text-slate-600">{runNow.data.created ? <L en={`job #${runNow.data.jobId} enqueued`} bn="সারিতে তোলা হয়েছে" /> : <L en={`already enqueued (job #${runNow.data.jobId})`} bn="আগেই সারিতে আছে" />}</div>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Card>
    </div>
  );
}
