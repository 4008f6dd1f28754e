'use client';
import { useQuery } from '@tanstack/react-query';
import { Card, L, fmtTime } from '../../../components/ui.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

export default function WorkersPage() {
  const trpc = useTRPC();
  const workers = useQuery({ ...trpc.admin.workers.queryOptions(), refetchInterval: 5_000 });
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L en="Workers" bn="ওয়ার্কার" /></h1>
      <Card className="overflow-x-auto">
        <table className="min-w-full text-sm">
          <thead className="text-left text-slate-600"><tr><th className="p-2"><L en="Worker" bn="ওয়ার্কার" /></th><th className="p-2"><L en="Queue" bn="কিউ" /></th><th className="p-2"><L en="Host" bn="হোস্ট" /></th><th className="p-2">PID</th><th className="p-2"><L en="Last seen" bn="শেষ দেখা" /></th><th className="p-2"><L en="State" bn="অবস্থা" /></th></tr></thead>
          <tbody>
            {workers.data?.map((w) => {
              const silentFor = `${Math.round(w.silentAfterMs / 1000)} s`;
              return (
                <tr key={w.id} className="border-t border-slate-100">
                  <td className="p-2 font-mono">{w.id}</td><td className="p-2">{w.queue}</td><td className="p-2">{w.host}</td><td className="p-2">{w.pid}</td>
                  <td className="p-2">{fmtTime(w.lastSeen)}</td>
                  <td data-testid="worker-state" data-state={w.state} className={`p-2 ${w.state === 'stopped' ? 'text-slate-500' : w.state === 'silent' || w.state === 'stalled' ? 'text-red-700' : 'text-emerald-700'}`}>
                    {w.state === 'stopped' ? <L en="stopped" bn="থেমেছে" />
                      : w.state === 'stalled' ? <><L en="stalled" bn="আটকে গেছে" /> <span className="text-xs" data-testid="worker-stall-reason">({w.stallReason ?? ''}{w.stalledSince ? <>, <L en="since" bn="থেকে" /> {fmtTime(w.stalledSince)}</> : null})</span></>
                      : w.state === 'silent' ? <><L en="silent" bn="নীরব" /> <span className="text-xs">(<L en={`no heartbeat for over ${silentFor}: its jobs are put back`} bn={`${silentFor}-এর বেশি সাড়া নেই`} />)</span></>
                      : <L en="alive" bn="সক্রিয়" />}
                    {w.runnerDeaths > 0 && <span className="ml-1 text-xs text-slate-500">· <L en={`runner replaced ${w.runnerDeaths}×`} bn={`রানার ${w.runnerDeaths} বার বদলানো হয়েছে`} /></span>}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {workers.data?.length === 0 && <p className="p-2 text-sm text-slate-500">No workers have reported · কোনো ওয়ার্কার নেই</p>}
      </Card>
    </div>
  );
}
