'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { use } from 'react';
import { Button, Card, fmtTime, L } from '../../../../../components/ui.tsx';
import { useTRPC } from '../../../../../lib/trpc.tsx';
import { messages } from '../../fields.tsx';
import { ImportStatus } from '../status.tsx';

/** Every string of this page, in English and Bengali (moves to the i18n catalogue as it is). */
const M = {
  en: {
    back: 'Imports', progressChecking: 'Checking rows', progressApplying: 'Applying rows', rowsRead: 'rows read', of: 'of',
    new: 'New', changed: 'Changed', unchanged: 'Unchanged', errors: 'With errors',
    preview: 'First rows', row: 'Row', code: 'Code', name: 'Name', action: 'What happens', fields: 'Changes',
    act_new: 'added', act_changed: 'updated', act_unchanged: 'no change', act_error: 'skipped: error',
    errorReport: 'Errors', column: 'Column', reason: 'Reason', download: 'Download the error report (CSV)', firstErrors: 'The first 50 are shown; the report has them all.',
    apply: 'Apply', applyNote: 'Rows with errors are skipped; fix them in the file and import it again (rows already applied stay as they are).',
    nothing: 'Nothing to apply: every valid row is already as in the file.', resume: 'Resume applying',
    stalled: 'Applying stopped after its last attempt failed; it resumes where it stopped.',
    loading: 'Loading…', done: 'Applied', addedN: 'added', updatedN: 'updated', failure: 'The file could not be read', month: 'Salaries from',
  },
  bn: {
    back: 'ইমপোর্ট', progressChecking: 'সারি যাচাই হচ্ছে', progressApplying: 'সারি প্রয়োগ হচ্ছে', rowsRead: 'সারি পড়া হয়েছে', of: 'এর মধ্যে',
    new: 'নতুন', changed: 'পরিবর্তিত', unchanged: 'অপরিবর্তিত', errors: 'ত্রুটিসহ',
    preview: 'প্রথম সারিগুলো', row: 'সারি', code: 'কোড', name: 'নাম', action: 'কী হবে', fields: 'পরিবর্তন',
    act_new: 'যোগ হবে', act_changed: 'হালনাগাদ হবে', act_unchanged: 'পরিবর্তন নেই', act_error: 'বাদ: ত্রুটি',
    errorReport: 'ত্রুটি', column: 'কলাম', reason: 'কারণ', download: 'ত্রুটির রিপোর্ট ডাউনলোড (CSV)', firstErrors: 'প্রথম ৫০টি দেখানো হলো; রিপোর্টে সবগুলো আছে।',
    apply: 'প্রয়োগ করুন', applyNote: 'ত্রুটিযুক্ত সারি বাদ যাবে; ফাইলে ঠিক করে আবার ইমপোর্ট করুন (প্রয়োগ হওয়া সারি যেমন আছে থাকবে)।',
    nothing: 'প্রয়োগের কিছু নেই: প্রতিটি সঠিক সারি ইতিমধ্যে ফাইলের মতোই।', resume: 'প্রয়োগ আবার শুরু করুন',
    stalled: 'শেষ চেষ্টা ব্যর্থ হওয়ায় প্রয়োগ থেমেছে; যেখানে থেমেছিল সেখান থেকে চলবে।',
    loading: 'লোড হচ্ছে…', done: 'প্রয়োগ হয়েছে', addedN: 'যোগ', updatedN: 'হালনাগাদ', failure: 'ফাইলটি পড়া যায়নি', month: 'বেতন যে মাস থেকে',
  },
};
const T = messages(M);

export default function ImportDetailPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = use(params);
  const trpc = useTRPC();
  const qc = useQueryClient();
  const view = useQuery({
    ...trpc.imports.get.queryOptions({ id }),
    // Polled while the job works; stops once it waits for HR or has ended.
    refetchInterval: (q) => (q.state.data && ['validated', 'applied', 'failed'].includes(q.state.data.status) ? false : 1_000),
  });
  const apply = useMutation(trpc.imports.apply.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.imports.get.queryKey({ id }) }) }));
  if (view.error) return <Card><p role="alert" className="text-red-700">{view.error.message}</p></Card>;
  const v = view.data;
  if (!v) return <p><T k="loading" /></p>;
  const working = v.status === 'uploaded' || v.status === 'validating' || v.status === 'applying';
  const total = v.status === 'applying' || v.status === 'applied' ? v.rowsTotal : null;
  const pct = total ? Math.min(100, Math.round((100 * v.phaseRows) / Math.max(1, total))) : null;
  const toApply = v.counts.new + v.counts.changed;
  return (
    <div className="space-y-4">
      <Link href="/employees/import" className="text-sm text-indigo-700 underline">← <T k="back" /></Link>
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="break-all text-2xl font-semibold">{v.filename}</h1>
        <ImportStatus status={v.status} />
      </div>
      <p className="text-sm text-slate-600"><T k="month" /> {v.effectiveMonth} · {fmtTime(v.createdAt)} · {v.createdBy}</p>

      {working && (
        <Card>
          <p id="import-progress-label" className="mb-2 text-sm">{v.status === 'applying' ? <T k="progressApplying" /> : <T k="progressChecking" />}:{' '}
            <span data-testid="import-progress">{v.phaseRows.toLocaleString('en-US')}{total ? ` / ${total.toLocaleString('en-US')}` : ''}</span></p>
          <div role="progressbar" aria-labelledby="import-progress-label" aria-valuemin={0} aria-valuemax={100} {...(pct === null ? {} : { 'aria-valuenow': pct })}
            className="h-3 w-full overflow-hidden rounded bg-slate-200">
            <div className={`h-full bg-indigo-600 ${pct === null ? 'w-1/3 animate-pulse' : ''}`} style={pct === null ? undefined : { width: `${pct}%` }} />
          </div>
          {v.stalled && (
            <div className="mt-3 space-y-2 text-sm">
              <p role="alert" className="text-amber-900"><T k="stalled" /></p>
              <Button onClick={() => apply.mutate({ id })} disabled={apply.isPending}><T k="resume" /></Button>
            </div>
          )}
        </Card>
      )}

      {v.status === 'failed' && (
        <Card><p role="alert" data-testid="import-failure" className="text-red-800"><T k="failure" />: {v.failure}</p></Card>
      )}

      {(v.status === 'validated' || v.status === 'applying' || v.status === 'applied') && (
        <dl className="grid grid-cols-2 gap-3 sm:grid-cols-4" data-testid="import-counts">
          {(['new', 'changed', 'unchanged', 'errors'] as const).map((k) => (
            <Card key={k} className="text-center">
              <dt className="text-sm text-slate-700"><T k={k} /></dt>
              <dd data-testid={`count-${k}`} className="text-2xl font-semibold">{v.counts[k].toLocaleString('en-US')}</dd>
            </Card>
          ))}
        </dl>
      )}

      {v.status === 'validated' && (
        <Card className="space-y-2">
          {toApply > 0
            ? <><Button onClick={() => apply.mutate({ id })} disabled={apply.isPending} data-testid="apply"><T k="apply" /> ({toApply.toLocaleString('en-US')})</Button>
              <p className="text-xs text-slate-600"><T k="applyNote" /></p></>
            : <p data-testid="nothing-to-apply" className="text-sm"><T k="nothing" /></p>}
          {apply.error && <p role="alert" className="text-sm text-red-700">{apply.error.message}</p>}
        </Card>
      )}

      {v.status === 'applied' && (
        <Card><p role="status" data-testid="import-applied" className="text-emerald-900"><T k="done" />: {v.applied.new.toLocaleString('en-US')} <T k="addedN" />, {v.applied.changed.toLocaleString('en-US')} <T k="updatedN" /> · {fmtTime(v.appliedAt)}</p></Card>
      )}

      {v.preview.length > 0 && (
        <section className="space-y-2">
          <h2 className="text-lg font-semibold"><T k="preview" /></h2>
          <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
            <table className="min-w-full text-sm" data-testid="import-preview">
              <thead className="bg-slate-50 text-left text-slate-600"><tr><th className="p-2"><T k="row" /></th><th className="p-2"><T k="code" /></th><th className="p-2"><T k="name" /></th><th className="p-2"><T k="action" /></th><th className="p-2"><T k="fields" /></th></tr></thead>
              <tbody>
                {v.preview.map((p) => (
                  <tr key={p.row} className="border-t border-slate-100">
                    <td className="p-2">{p.row}</td><td className="p-2 font-mono">{p.code}</td><td className="p-2">{p.name}</td>
                    <td className="p-2"><T k={`act_${p.action}`} /></td><td className="p-2 font-mono text-xs">{p.fields.join(', ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}

      {v.errors.length > 0 && (
        <section className="space-y-2">
          <div className="flex flex-wrap items-center gap-3">
            <h2 className="text-lg font-semibold"><T k="errorReport" /></h2>
            <a className="text-sm text-indigo-700 underline" data-testid="error-report" href={`/api/imports/${id}/errors`} download><T k="download" /></a>
          </div>
          <p className="text-xs text-slate-600"><T k="firstErrors" /></p>
          <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
            <table className="min-w-full text-sm" data-testid="import-errors">
              <thead className="bg-slate-50 text-left text-slate-600"><tr><th className="p-2"><T k="row" /></th><th className="p-2"><T k="column" /></th><th className="p-2"><T k="reason" /></th></tr></thead>
              <tbody>
                {v.errors.map((e) => (
                  <tr key={`${e.row}:${e.column}`} className="border-t border-slate-100">
                    <td className="p-2">{e.row}</td><td className="p-2 font-mono">{e.column}</td><td className="p-2"><L en={e.reasonEn} bn={e.reasonBn} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </div>
  );
}
