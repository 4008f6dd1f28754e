'use client';
/**
 * Delivery truth from SendGrid's Event Webhook (issue 16), as small components the HR and admin
 * pages include: a run's delivered / bounced / dropped / awaiting counts, the "fix these
 * addresses" list, an employee's delivery events, and the admin's email-queue panel with its
 * "resume" action.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useTRPC } from '../lib/trpc.tsx';
import { Button, Card, L, fmtTime } from './ui.tsx';

export function RunDeliveryCounts({ runId }: { runId: string }) {
  const trpc = useTRPC();
  const counts = useQuery({ ...trpc.delivery.runCounts.queryOptions({ runId }), refetchInterval: 5_000 });
  if (!counts.data) return null;
  const c = counts.data;
  const items = [
    ['delivered', c.delivered, 'Received', 'পৌঁছেছে'],
    ['bounced', c.bounced, 'Bounced', 'ফেরত এসেছে'],
    ['dropped', c.dropped, 'Dropped', 'বাদ পড়েছে'],
    ['awaiting', c.awaiting, 'Awaiting confirmation', 'নিশ্চিতকরণের অপেক্ষায়'],
  ] as const;
  return (
    <dl data-testid="run-delivery" className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
      {items.map(([key, n, en, bn]) => (
        <div key={key} data-delivery={key}><dt className="text-slate-500"><L en={en} bn={bn} /></dt><dd className="font-medium">{n.toLocaleString('en-US')}</dd></div>
      ))}
    </dl>
  );
}

export function AddressesToFix() {
  const trpc = useTRPC();
  const list = useQuery({ ...trpc.delivery.addressesToFix.queryOptions(), refetchInterval: 15_000 });
  if (!list.data?.length) return null;
  return (
    <Card>
      <h2 className="mb-2 text-lg font-semibold"><L en="Fix these addresses" bn="এই ঠিকানাগুলো ঠিক করুন" /></h2>
      <p className="mb-2 text-sm text-slate-600"><L en="The slip to these addresses bounced or was dropped. Fix the address, then resend." bn="এই ঠিকানায় স্লিপ পৌঁছায়নি। ঠিকানা ঠিক করে আবার পাঠান।" /></p>
      <ul data-testid="addresses-to-fix" className="space-y-1 text-sm">
        {list.data.map((a) => (
          <li key={a.employeeId} data-employee-id={a.employeeId}>
            <Link className="text-blue-700 underline" href={`/employees/${a.employeeId}`}>{a.name}</Link> — {a.email} — <b>{a.state}</b>{a.reason ? `: ${a.reason}` : ''}
          </li>
        ))}
      </ul>
    </Card>
  );
}

export function DeliveryEvents({ employeeId }: { employeeId: number }) {
  const trpc = useTRPC();
  const events = useQuery({ ...trpc.delivery.employeeEvents.queryOptions({ id: employeeId }), refetchInterval: 10_000 });
  if (!events.data?.length) return null;
  return (
    <Card>
      <h2 className="mb-2 text-lg font-semibold"><L en="Delivery events" bn="ডেলিভারির ঘটনা" /></h2>
      <table data-testid="delivery-events" className="w-full text-sm">
        <tbody>
          {events.data.map((e, i) => (
            <tr key={i} className="border-b"><td className="pr-2">{fmtTime(e.at)}</td><td className="pr-2">{e.key}</td><td className="pr-2 font-medium">{e.event}</td><td className="pr-2">{e.email}</td><td>{e.reason ?? ''}</td></tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}

export function EmailAccountPanel() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const status = useQuery({ ...trpc.admin.emailAccount.queryOptions(), refetchInterval: 5_000 });
  const resume = useMutation(trpc.admin.resumeEmail.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.admin.emailAccount.queryKey() }) }));
  const s = status.data;
  if (!s) return null;
  return (
    <Card>
      <h2 className="mb-2 text-lg font-semibold">Email account</h2>
      {s.paused ? (
        <div data-testid="email-paused" className="space-y-2 text-red-700">
          <p><b>send-email is paused</b> since {fmtTime(s.paused.pausedAt)} ({s.paused.errorCode}): {s.paused.reason}</p>
          <p className="text-sm text-slate-600">Jobs stay queued. Fix the setting (key, sender, credits); the workers resume by themselves when their account check passes, or resume now.</p>
          <Button onClick={() => resume.mutate()} disabled={resume.isPending}>Resume sending</Button>
        </div>
      ) : (
        <p data-testid="email-running">send-email is running.</p>
      )}
      <p className="mt-2 text-sm">Sends awaiting evidence now: {s.unknownNow}; resent after an unknown outcome (possible duplicates): <b>{s.resentAfterUnknown}</b></p>
      <p className="text-sm text-slate-600">Event Webhook: {Object.entries(s.webhook).map(([k, n]) => `${k} ${n}`).join(' · ') || 'nothing received yet'}</p>
    </Card>
  );
}
