/**
 * How every Beton program reads its settings: one zod object schema of environment variables
 * per program (apps/worker/src/config.ts, apps/web/src/env.ts, scripts/lib/launcher-env.ts),
 * parsed once at start by `parseEnv`. Two markers slot a setting into the production rules:
 *
 * - `requiredInProduction(schema, why)`: with NODE_ENV=production the variable must be set
 *   (a development default, if the schema has one, is not used) — the database, the auth
 *   secret, the app URL, the email provider's key, the bank's URL and key.
 * - `testOnly(schema)`: a hook for tests and drills (fault injection); with
 *   NODE_ENV=production setting it is refused.
 *
 * Every problem is one line naming the variable, never its value (it may be a secret); a
 * program prints them all and exits non-zero (`failFast`).
 */
import { z } from 'zod';

interface SettingMeta {
  /** What to set, shown when it is missing in production. */
  requiredInProduction?: string;
  testOnly?: boolean;
}

function metaOf(schema: z.ZodType): SettingMeta {
  return (schema.meta() ?? {}) as SettingMeta;
}

/** With NODE_ENV=production the variable must be set; `why` says what to set it to. */
export function requiredInProduction<T extends z.ZodType>(schema: T, why: string): T {
  return schema.meta({ ...metaOf(schema), requiredInProduction: why });
}

/** A test-only hook: refused when NODE_ENV=production. */
export function testOnly<T extends z.ZodType>(schema: T): T {
  return schema.meta({ ...metaOf(schema), testOnly: true });
}

/** One line per setting that is missing, malformed or not allowed here. */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

const isSet = (value: string | undefined) => value !== undefined && value !== '';

/**
 * Parses `env` with `schema`. With NODE_ENV=production (or `production: true`) every
 * `requiredInProduction` variable must be set and no `testOnly` one may be. Throws a
 * SettingsError listing every problem at once, one line each, in the schema's order.
 */
export function parseEnv<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env, options: { production?: boolean } = {}): z.infer<S> {
  const production = options.production ?? env.NODE_ENV === 'production';
  const problems = new Map<string, string>();
  if (production) {
    const shape: Record<string, z.ZodType> = schema.shape;
    for (const [key, field] of Object.entries(shape)) {
      const meta = metaOf(field);
      if (meta.requiredInProduction && !isSet(env[key])) problems.set(key, `${key}: required when NODE_ENV=production (${meta.requiredInProduction})`);
      if (meta.testOnly && isSet(env[key])) problems.set(key, `${key}: a test-only setting, refused when NODE_ENV=production`);
    }
  }
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.join('.') || '(environment)';
      if (problems.has(key)) continue;
      const field = (schema.shape as Record<string, z.ZodType>)[key];
      const missing = issue.code === 'invalid_type' && !isSet(env[key]);
      const why = field ? metaOf(field).requiredInProduction : undefined;
      problems.set(key, missing ? `${key}: required${why ? ` (${why})` : ''}` : `${key}: ${issue.message}`);
    }
  }
  if (problems.size > 0) {
    const order = Object.keys(schema.shape);
    const rank = (k: string) => (order.includes(k) ? order.indexOf(k) : order.length);
    throw new SettingsError([...problems].sort(([a], [b]) => rank(a) - rank(b)).map(([, line]) => line));
  }
  return parsed.data as z.infer<S>;
}

/** The variables a schema marks required in production, for docs and checks. */
export function productionRequirements(schema: z.ZodObject): string[] {
  return Object.entries(schema.shape as Record<string, z.ZodType>)
    .filter(([, f]) => metaOf(f).requiredInProduction)
    .map(([k]) => k);
}

/**
 * Runs a program's settings loader; on a SettingsError prints one line per problem on stderr,
 * prefixed with the program's name, and exits with code 1.
 */
export function failFast<T>(program: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    for (const line of error.problems) process.stderr.write(`${program}: ${line}\n`);
    process.exit(1);
  }
}
