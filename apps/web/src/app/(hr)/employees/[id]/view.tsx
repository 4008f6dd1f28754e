'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { TRPCClientError } from '@trpc/client';
import { useEffect, useState } from 'react';
import { Button, Card, L, StatusBadge, StatusLabel, fmtTime } from '../../../../components/ui.tsx';
import { DeliveryEvents } from '../../../../components/delivery.tsx';
import { EmployeeEditor } from './edit.tsx';
import { DateOfBirthCard } from '../../../../components/date-of-birth.tsx';
import { useTRPC } from '../../../../lib/trpc.tsx';

function fieldError(error: unknown, field: string): string | null {
  if (error instanceof TRPCClientError) {
    const fe = (error.data as { fieldErrors?: Record<string, string | string[]> } | undefined)?.fieldErrors?.[field];
    if (fe) return Array.isArray(fe) ? fe[0] ?? null : fe;
  }
  return null;
}

export function EmployeeView({ id }: { id: number }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const detail = useQuery(trpc.employees.get.queryOptions({ id }));
  const [email, setEmail] = useState('');
  useEffect(() => { if (detail.data) setEmail(detail.data.email); }, [detail.data?.email]);
  const updateEmail = useMutation(trpc.employees.updateEmail.mutationOptions({
    onSuccess: () => qc.invalidateQueries({ queryKey: trpc.employees.get.queryKey({ id }) }),
  }));
  const [month, setMonth] = useState(() => new Date().toISOString().slice(0, 7));
  useEffect(() => { const m = detail.data?.months.find((x) => /^\d{4}-\d{2}$/.test(x.month))?.month; if (m) setMonth(m); }, [detail.data?.months.length]);
  const refreshDetail = () => qc.invalidateQueries({ queryKey: trpc.employees.get.queryKey({ id }) });
  const resend = useMutation(trpc.employees.resend.mutationOptions({ onSuccess: refreshDetail }));
  const copy = useMutation(trpc.employees.sendCopy.mutationOptions({ onSuccess: refreshDetail }));
  // The job whose progress shows: the resend (new or already on its way), or the copy.
  const [tracked, setTracked] = useState<number | undefined>(undefined);
  useEffect(() => { if (resend.data && resend.data.outcome !== 'delivered') setTracked(resend.data.jobId); }, [resend.data]);
  useEffect(() => { if (copy.data) setTracked(copy.data.jobId); }, [copy.data]);
  const jobId = tracked;
  const status = useQuery({
    ...trpc.employees.resendStatus.queryOptions({ jobId: jobId ?? 0 }),
    enabled: jobId !== undefined,
    refetchInterval: (q) => (q.state.data && ['done', 'failed'].includes(q.state.data.overall) ? false : 1_000),
  });
  useEffect(() => { if (status.data?.overall === 'done' || status.data?.overall === 'failed') void qc.invalidateQueries({ queryKey: trpc.employees.get.queryKey({ id }) }); }, [status.data?.overall]);

  const delivered = detail.data?.months.find((m) => m.month === month)?.delivered ?? null;
  const sendCopy = () => {
    const to = detail.data?.email ?? '';
    if (window.confirm(`Send another copy of the ${month} slip to ${to}? The employee gets a SECOND email with the same slip. · ${month} মাসের স্লিপ ${to}-এ আবার পাঠাবেন? কর্মচারী একই স্লিপের দ্বিতীয় ইমেইল পাবেন।`)) copy.mutate({ id, month });
  };
  if (detail.error) return <Card><p role="alert" className="text-red-700">{detail.error.message}</p></Card>;
  if (!detail.data) return <p><L en="Loading…" bn="লোড হচ্ছে…" /></p>;
  const e = detail.data;
  const emailError = fieldError(updateEmail.error, 'email') ?? (updateEmail.error ? updateEmail.error.message : null);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">{e.nameLatin} <span lang="bn" className="text-slate-500">{e.nameBengali}</span></h1>
        <p className="font-mono text-sm text-slate-500">{e.code}</p>
      </div>
      <EmployeeEditor id={id} />
      <div className="grid gap-4 md:grid-cols-2">
        <Card>
          <h2 className="mb-2 font-semibold"><L en="Email address" bn="ইমেইল ঠিকানা" /></h2>
          <form className="space-y-2" noValidate onSubmit={(ev) => { ev.preventDefault(); updateEmail.mutate({ id, email }); }}>
            <input aria-label="email" name="email" value={email} onChange={(ev) => setEmail(ev.target.value)} aria-invalid={!!emailError}
              className={`w-full rounded border px-2 py-1.5 ${emailError ? 'border-red-500' : 'border-slate-300'}`} />
            {emailError && <p role="alert" data-testid="email-error" className="text-sm text-red-700">{emailError}</p>}
            {updateEmail.isSuccess && <p data-testid="email-saved" className="text-sm text-emerald-700">Saved · সংরক্ষিত</p>}
            <Button type="submit" disabled={updateEmail.isPending}><L en="Save email" bn="ইমেইল সংরক্ষণ" /></Button>
          </form>
        </Card>
        <DateOfBirthCard id={id} />
        <Card>
          <h2 className="mb-2 font-semibold"><L en="Resend slip" bn="স্লিপ আবার পাঠান" /></h2>
          <div className="flex flex-wrap items-center gap-2">
            <input aria-label="resend month" type="month" value={month} onChange={(ev) => setMonth(ev.target.value)} className="rounded border border-slate-300 px-2 py-1" />
            <Button disabled={resend.isPending} onClick={() => { setTracked(undefined); resend.mutate({ id, month }); }}><L en="Resend slip" bn="আবার পাঠান" /></Button>
            {delivered && <Button variant="secondary" disabled={copy.isPending} onClick={sendCopy}><L en="Send another copy…" bn="আরেকটি কপি পাঠান…" /></Button>}
          </div>
          <p className="mt-1 text-xs text-slate-500"><L en="Sends the month's slip once: nothing more if it is already on its way or was delivered." bn="মাসের স্লিপ একবারই যায়: পথে থাকলে বা পৌঁছে গেলে আর নয়।" /></p>
          {resend.error && <p role="alert" className="mt-2 text-sm text-red-700">{resend.error.message}</p>}
          {copy.error && <p role="alert" className="mt-2 text-sm text-red-700">{copy.error.message}</p>}
          {resend.data?.outcome === 'delivered' && (
            <p className="mt-2 text-sm text-emerald-800" data-testid="resend-outcome" data-outcome="delivered">
              <L en={`Already delivered${resend.data.sentAt ? ` at ${fmtTime(resend.data.sentAt)}` : ''} to ${resend.data.to}: nothing sent. Use "Send another copy" if the employee lost it.`}
                bn={`ইতিমধ্যে ${resend.data.to}-এ পৌঁছেছে: কিছু পাঠানো হয়নি। কর্মচারী হারিয়ে ফেললে "আরেকটি কপি পাঠান" ব্যবহার করুন।`} /></p>
          )}
          {resend.data?.outcome === 'in-progress' && (
            <p className="mt-2 text-sm text-indigo-800" data-testid="resend-outcome" data-outcome="in-progress">
              <L en={`This slip is already on its way: no second email.${resend.data.promoted ? ' It was moved ahead of the monthly run.' : ''}`}
                bn={`এই স্লিপ ইতিমধ্যে পথে: দ্বিতীয় ইমেইল যাবে না।${resend.data.promoted ? ' এটিকে মাসিক রানের আগে নেওয়া হয়েছে।' : ''}`} /></p>
          )}
          {copy.data && (
            <p className="mt-2 text-sm" data-testid="copy-outcome"><L en={`Copy ${copy.data.copy} to ${copy.data.to}${copy.data.created ? '' : ' (already on its way)'}`} bn={`কপি ${copy.data.copy}, ${copy.data.to}-এ`} /></p>
          )}
          {jobId !== undefined && (
            <p className="mt-2 text-sm" data-testid="resend-status"><L en="Job" bn="কাজ" /> #{jobId}: <StatusBadge status={status.data?.overall ?? 'queued'} />
              {status.data?.retrying && <span className="ml-2 text-amber-700">(<StatusLabel status="retrying" />)</span>}
              {status.data?.supersededBy && <span className="ml-2 text-slate-600"><L en={`(delivered by ${status.data.supersededBy})`} bn={`(${status.data.supersededBy} দ্বারা পৌঁছেছে)`} /></span>}
              {status.data?.error && <span className="ml-2 text-red-700">{status.data.error}</span>}</p>
          )}
        </Card>
      </div>
      <h2 className="text-lg font-semibold"><L en="Slip history" bn="স্লিপের ইতিহাস" /></h2>
      {e.months.length === 0 && <Card>No slips yet · এখনও কোনো স্লিপ নেই</Card>}
      {e.months.map((m) => (
        <Card key={m.month}>
          <div className="mb-2 flex flex-wrap items-center gap-3">
            <h3 className="font-semibold">{m.month}</h3>
            {m.delivered && <span data-testid="month-delivered" className="text-sm text-emerald-700"><L en={`delivered by ${m.delivered.label} to ${m.delivered.to}`} bn={`${m.delivered.to}-এ পৌঁছেছে`} />{m.delivered.sentAt && <> · {fmtTime(m.delivered.sentAt)}</>}</span>}
            {m.slips.map((s) => (
              <a key={s.id} className="text-sm text-indigo-700 underline" href={`/api/slips/${s.id}/pdf`} target="_blank" rel="noreferrer">PDF ({Math.round(s.bytes / 1024)} KB)</a>
            ))}
          </div>
          {m.resends.length > 0 && (
            <ul className="mb-2 text-xs text-slate-600" data-testid="resends">
              {m.resends.map((r) => (
                <li key={r.n}>{r.copy ? <L en={`Copy ${r.n}`} bn={`কপি ${r.n}`} /> : <L en={`Resend ${r.n}`} bn={`পুনরায় পাঠানো ${r.n}`} />} · {fmtTime(r.requestedAt)} · <L en="by" bn="অনুরোধ" /> {r.requestedBy} · <span className="font-mono">#{r.jobId}</span></li>
              ))}
            </ul>
          )}
          <ul className="space-y-2 text-sm">
            {m.jobs.map((j) => (
              <li key={j.id} className="rounded border border-slate-100 p-2">
                <div className="flex flex-wrap items-center gap-2"><span className="font-mono">#{j.id}</span> {j.taskName} <StatusBadge status={j.status} />
                  {j.supersededBy && <span data-testid="superseded-by" className="text-xs text-slate-600"><L en={`superseded by ${j.supersededBy.label}`} bn={`${j.supersededBy.label} দ্বারা প্রতিস্থাপিত`} /></span>}
                  <span className="text-xs text-slate-500">{j.idempotencyKey}</span></div>
                {j.attemptLog.length > 0 && (
                  <table className="mt-1 w-full text-xs"><tbody>
                    {j.attemptLog.map((a, i) => (
                      <tr key={i} className="border-t border-slate-100">
                        <td className="pr-2">#{a.attempt}</td><td className="pr-2">{fmtTime(a.startedAt)}</td><td className="pr-2">{a.durationMs ?? '—'} ms</td>
                        <td className="pr-2"><StatusBadge status={a.outcome} /></td><td className="text-red-700 wrap-anywhere">{a.errorCode} {a.errorMessage}</td>
                      </tr>
                    ))}
                  </tbody></table>
                )}
              </li>
            ))}
          </ul>
        </Card>
      ))}
      <DeliveryEvents employeeId={id} />
    </div>
  );
}
