import { getTranslations } from 'next-intl/server';
import { Card } from '../../../../components/ui.tsx';
import { EmployeeView } from './view.tsx';

export default async function EmployeePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  // A bad address (/employees/abc) says so in words instead of a validation error.
  if (!/^[1-9]\d{0,9}$/.test(id) || Number(id) > 2_147_483_647) {
    const t = await getTranslations('employee');
    return (
      <Card>
        <h1 className="text-xl font-semibold">{t('notFound')}</h1>
      </Card>
    );
  }
  return <EmployeeView id={Number(id)} />;
}
