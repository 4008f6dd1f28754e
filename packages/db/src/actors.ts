/**
 * Who did something, as a page names them. Actions are recorded with an actor string: a person
 * signed in to the console is `<role>:<email>` ('hr:rahim@acme.example'), an operator at the
 * command line `cli:<user>` (with `@<host>` when a run records where), and the scheduler's work a
 * worker id (`<host>:<pid>:<queue>:<id>`). A page shows the person's name, never the raw string;
 * the words for the other kinds come from the page's catalogue (`actor.*`).
 */
import { z } from 'zod';
import type { Pool, PoolClient } from './pool.ts';
import { userNamesByEmail } from './sql/users.ts';

export const actorOutput = z.discriminatedUnion('kind', [
  /** A console user: their name (their email when the user was since deleted). */
  z.object({ kind: z.literal('person'), name: z.string() }),
  /** An operator's command (`npm run beton -- …`): the operating-system user. */
  z.object({ kind: z.literal('cli'), user: z.string() }),
  /** Beton itself: a worker (the payroll schedule, a retry) on `host`. */
  z.object({ kind: z.literal('system'), host: z.string() }),
]);
export type Actor = z.infer<typeof actorOutput>;

const PERSON = /^(hr|admin):(.+@.+)$/i;
const CLI = /^cli:([^@\s]+)(?:@.*)?$/;
const WORKER = /^([^:\s]+):\d+:[\w-]+(?::.*)?$/;

/** Each distinct actor string as a page names it (one query for the people among them). */
export async function describeActors(db: Pool | PoolClient, actors: ReadonlyArray<string | null | undefined>): Promise<Map<string, Actor>> {
  const distinct = [...new Set(actors.filter((a): a is string => !!a))];
  const emails = distinct.flatMap((a) => PERSON.exec(a)?.[2]?.toLowerCase() ?? []);
  const names = new Map<string, string>();
  if (emails.length) {
    for (const r of await userNamesByEmail(db, emails)) names.set(r.email, r.name);
  }
  const out = new Map<string, Actor>();
  for (const a of distinct) {
    const person = PERSON.exec(a);
    const cli = CLI.exec(a);
    const worker = WORKER.exec(a);
    if (person) out.set(a, { kind: 'person', name: names.get(person[2]!.toLowerCase()) || person[2]! });
    else if (cli) out.set(a, { kind: 'cli', user: cli[1]! });
    else if (worker) out.set(a, { kind: 'system', host: worker[1]! });
    else out.set(a, { kind: 'person', name: a });
  }
  return out;
}

/** One actor as a page names it. */
export async function describeActor(db: Pool | PoolClient, actor: string): Promise<Actor> {
  return (await describeActors(db, [actor])).get(actor)!;
}
