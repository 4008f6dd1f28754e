'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { FileInput } from '../../../../components/inputs/file-input.tsx';
import { MonthInput } from '../../../../components/inputs/month-input.tsx';
import { Button, Card } from '../../../../components/ui.tsx';
import { STACK_ON_PHONE, Table, Td, Th, THead } from '../../../../components/ui/table.tsx';
import { useErrorText } from '../../../../lib/errors.ts';
import { useFmt } from '../../../../lib/format.ts';
import { useTRPC } from '../../../../lib/trpc.tsx';
import { useReasonText } from '../fields.tsx';
import { thisMonth } from '../../../../lib/month.ts';
import { ImportStatus } from './status.tsx';

/** Upload an employee file (CSV/XLSX) for a dry run; earlier imports. Strings: messages `imports`. */
export default function ImportPage() {
  const t = useTranslations('imports');
  const { when, num } = useFmt();
  const reasonText = useReasonText();
  const errorText = useErrorText();
  const trpc = useTRPC();
  const router = useRouter();
  const list = useQuery(trpc.imports.list.queryOptions());
  const [file, setFile] = useState<File | null>(null);
  const [month, setMonth] = useState(thisMonth());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const upload = async () => {
    if (!file) return setError(t('chooseFile'));
    setBusy(true);
    setError(null);
    try {
      const type = file.name.toLowerCase().endsWith('.xlsx') ? 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' : 'text/csv';
      const res = await fetch(`/api/imports?${new URLSearchParams({ filename: file.name, month })}`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: file,
      });
      const body = (await res.json().catch(() => ({}))) as { id?: string; error?: { code?: string; reason?: string; limit?: string; requestId?: string } };
      if (res.ok && body.id) return router.push(`/employees/import/${body.id}`);
      const e = body.error;
      setError(
        t('uploadFailed', {
          reason:
            e?.reason === 'file.tooLarge' && e.limit
              ? t('tooLarge', { limit: e.limit })
              : e?.reason
                ? reasonText(e.reason)
                : e?.code === 'UNAUTHORIZED'
                  ? t('signIn')
                  : t('serverError', { requestId: e?.requestId ?? '?' }),
        }),
      );
    } catch {
      setError(errorText(null));
    }
    setBusy(false);
  };
  return (
    <div className="space-y-4">
      <Link href="/employees" className="text-sm text-indigo-700 underline">
        ← {t('back')}
      </Link>
      <h1 className="text-2xl font-semibold">{t('title')}</h1>
      <Card className="space-y-3">
        <p className="text-sm text-slate-700">{t('howTo')}</p>
        <form
          noValidate
          className="flex flex-wrap items-end gap-4"
          onSubmit={(e) => {
            e.preventDefault();
            void upload();
          }}
        >
          <FileInput
            id="import-file"
            label={t('file')}
            accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            describedBy={error ? 'upload-error' : undefined}
            onChange={(f) => {
              setFile(f);
              setError(null);
            }}
          />
          <div className="w-72 max-w-full">
            <MonthInput id="field-month" label={t('month')} value={month} onChange={setMonth} />
          </div>
          <Button type="submit" disabled={busy}>
            {busy ? t('uploading') : t('upload')}
          </Button>
        </form>
        {error && (
          <p role="alert" id="upload-error" data-testid="upload-error" className="text-sm text-red-800">
            {error}
          </p>
        )}
      </Card>
      <h2 className="text-lg font-semibold">{t('previous')}</h2>
      {list.error && (
        <p role="alert" className="text-sm text-red-800">
          {errorText(list.error)}
        </p>
      )}
      <Table caption={t('caption')} className={STACK_ON_PHONE} data-testid="imports">
        <THead>
          <tr>
            <Th>{t('fileName')}</Th>
            <Th>{t('status')}</Th>
            <Th>{t('rows')}</Th>
            <Th>{t('when')}</Th>
          </tr>
        </THead>
        <tbody>
          {list.data?.map((i) => (
            <tr key={i.id} className="border-t border-slate-100">
              <Td data-label={t('fileName')} className="break-all" translate="no">
                <Link className="text-indigo-700 underline" href={`/employees/import/${i.id}`}>
                  {i.filename}
                </Link>
              </Td>
              <Td data-label={t('status')}>
                <ImportStatus status={i.status} counts={i.counts} />
              </Td>
              <Td data-label={t('rows')}>{i.rowsTotal === null ? '—' : num(i.rowsTotal)}</Td>
              <Td data-label={t('when')}>{when(i.createdAt)}</Td>
            </tr>
          ))}
        </tbody>
      </Table>
      {list.data?.length === 0 && <p className="text-sm text-slate-700">{t('none')}</p>}
    </div>
  );
}
