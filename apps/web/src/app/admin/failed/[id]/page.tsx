import { getTranslations } from 'next-intl/server';
import Link from 'next/link';
import { Card } from '../../../../components/ui.tsx';
import { JobView } from './view.tsx';

/** One job on its own page (linked from the failed-jobs list; `?back=` keeps the list's filter). */
export default async function JobPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ back?: string }> }) {
  const { id } = await params;
  const { back } = await searchParams;
  const backHref = `/admin/failed${typeof back === 'string' && back ? `?${new URLSearchParams(back).toString()}` : ''}`;
  if (!/^[1-9]\d{0,15}$/.test(id)) {
    const t = await getTranslations();
    return (
      <div className="space-y-4">
        <Link href={backHref} className="text-sm text-indigo-700 underline">
          ← {t('job.back')}
        </Link>
        <Card>
          <h1 data-testid="bad-job-id" className="text-xl font-semibold">
            {t('errors.badJobId', { value: id })}
          </h1>
        </Card>
      </div>
    );
  }
  return <JobView id={Number(id)} backHref={backHref} />;
}
