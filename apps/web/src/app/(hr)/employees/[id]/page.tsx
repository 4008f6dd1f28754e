import { EmployeeView } from './view.tsx';

export default async function EmployeePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <EmployeeView id={Number(id)} />;
}
