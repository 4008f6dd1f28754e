import { adminRouter } from './routers/admin.ts';
import { authRouter } from './routers/auth.ts';
import { deliveryRouter, employeesRouter, runsRouter } from './routers/hr.ts';
import { importsRouter, peopleRouter } from './routers/people.ts';
import { companySettingsRouter, dateOfBirthRouter, monthsRouter, slipCodeRouter } from './routers/months.ts';
import { router } from './trpc.ts';

export const appRouter = router({
  auth: authRouter,
  runs: runsRouter,
  employees: employeesRouter,
  delivery: deliveryRouter,
  people: peopleRouter,
  imports: importsRouter,
  months: monthsRouter,
  company: companySettingsRouter,
  dateOfBirth: dateOfBirthRouter,
  slipCode: slipCodeRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;
