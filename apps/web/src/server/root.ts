import { adminRouter } from './routers/admin.ts';
import { authRouter } from './routers/auth.ts';
import { deliveryRouter, employeesRouter, runsRouter } from './routers/hr.ts';
import { importsRouter, peopleRouter } from './routers/people.ts';
import { router } from './trpc.ts';

export const appRouter = router({
  auth: authRouter,
  runs: runsRouter,
  employees: employeesRouter,
  delivery: deliveryRouter,
  people: peopleRouter,
  imports: importsRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;
