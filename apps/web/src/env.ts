import { parseEnv, requiredInProduction } from '@beton/config';
import { otelEnvShape } from '@beton/telemetry/settings';
import { DEFAULT_IMPORT_MAX_BYTES, DEFAULT_IMPORT_MAX_INFLATED_BYTES, MAX_IMPORT_BYTES_CEILING } from '@beton/people/import/policy';
import { createPublicKey } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';

/** SendGrid's Event Webhook verification key: base64 DER (SubjectPublicKeyInfo) of a P-256 key. */
const webhookPublicKey = z.string().refine((key) => {
  try {
    const k = createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' });
    return k.asymmetricKeyType === 'ec' && k.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  } catch {
    return false;
  }
}, 'SENDGRID_WEBHOOK_PUBLIC_KEY must be the Event Webhook verification key from SendGrid (base64, an ECDSA P-256 public key: GET /v3/user/webhooks/event/settings/signed)');

/** Used only outside production when BETTER_AUTH_SECRET is unset (`next dev`, local tests). */
const DEVELOPMENT_AUTH_SECRET = 'beton-development-only-auth-secret-never-in-production';

/**
 * The ONE place in apps/web that reads process.env: validated when the server starts
 * (src/instrumentation.ts: one line per problem, then exit 1) and on first use. With
 * NODE_ENV=production the `requiredInProduction` settings must be set (@beton/config).
 */
export const schema = z.object({
  DATABASE_URL: requiredInProduction(z.string().url('DATABASE_URL must be a postgres:// URL'), 'postgres://user:password@host:5432/beton'),
  PORT: z.coerce.number().int().positive().optional(),
  /**
   * Signs the session cookie and encrypts Better Auth's stored secrets: 32+ random characters
   * (`openssl rand -base64 32`), the same on every web replica. Required in production;
   * elsewhere a fixed development-only value is used when unset.
   */
  BETTER_AUTH_SECRET: requiredInProduction(
    z.string().min(32, 'BETTER_AUTH_SECRET must be at least 32 characters (openssl rand -base64 32)').optional(),
    '32+ random characters: openssl rand -base64 32',
  ),
  /**
   * The dashboard's public URL (`https://beton.example.com`): Better Auth's base URL and the one
   * origin mutations are accepted from; `https://` makes the session cookie `Secure` and turns
   * HSTS on. Required in production; in development the URL of each request is used.
   */
  BETTER_AUTH_URL: requiredInProduction(
    z.string().url('BETTER_AUTH_URL must be the dashboard URL, e.g. https://beton.example.com').optional(),
    'the dashboard URL, e.g. https://beton.example.com',
  ),
  /** Connections the web server's pool may hold. Default: 10. */
  WEB_DB_POOL_MAX: z.coerce.number().int().positive().default(10),
  /**
   * Addresses of the reverse proxies in front of the web app (comma-separated IPs or CIDR
   * ranges, e.g. `10.0.0.0/8,127.0.0.1`). A request from one of them is attributed to the
   * address it names in X-Forwarded-For; any other request to its socket's address, whatever
   * headers it sends. Default: none (the app is reached directly).
   */
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().refine(isAddressOrRange, { error: (issue) => `"${String(issue.input)}" is not an IP address or CIDR range` }))),
  /**
   * Bearer token a Prometheus scrape of `/api/metrics` must send (32+ characters). Unset:
   * the endpoint answers 404, so metrics are never public by default.
   */
  METRICS_TOKEN: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.string().min(32, 'METRICS_TOKEN must be at least 32 characters (openssl rand -hex 32)').optional(),
  ),
  /**
   * The sign-in back-off (server/sign-in-limit.ts): once a count below is spent, it takes no
   * attempt for this many seconds, doubled at each further lock, up to an hour. Default: 60.
   */
  SIGN_IN_ACCOUNT_LOCK_SECONDS: z.coerce.number().int().positive().max(3600).default(60),
  /**
   * Failed attempts at an account from unknown devices (no device cookie of the account),
   * whatever their addresses, before the account is slowed for unknown devices. Known devices
   * are not slowed by it. Default: 10.
   */
  SIGN_IN_ACCOUNT_ATTEMPTS: z.coerce.number().int().positive().max(100).default(10),
  /** Failed attempts at an account from one client (a known device, or an unknown one's address) before that client is slowed. Default: 5. */
  SIGN_IN_CLIENT_ATTEMPTS: z.coerce.number().int().positive().max(100).default(5),
  /**
   * A link to a job's trace in the operators' tracing tool, shown on the admin's job page
   * (docs/tracing.md): a URL with `{traceId}` where the trace id goes, e.g. Jaeger's
   * `https://jaeger.example.com/trace/{traceId}`. Unset: the trace id is shown without a link.
   */
  BETON_TRACE_LINK_TEMPLATE: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .refine((v) => /^https?:\/\//.test(v) && v.includes('{traceId}') && URL.canParse(v.replaceAll('{traceId}', '0')), {
        message: 'BETON_TRACE_LINK_TEMPLATE must be an http(s) URL with {traceId} where the trace id goes, e.g. https://jaeger.example.com/trace/{traceId}',
      })
      .optional(),
  ),
  /** pino level of the web server's JSON log. Default: info. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** 'json' (one object a line) or 'pretty' (for a terminal). Default: json. */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /**
   * The Event Webhook's verification key (signed webhook): batches whose ECDSA signature does
   * not verify with it are refused. Required in production; without it the endpoint refuses
   * every batch (503), so SendGrid keeps them for its retries.
   */
  SENDGRID_WEBHOOK_PUBLIC_KEY: requiredInProduction(webhookPublicKey.optional(), 'the Event Webhook verification key from SendGrid'),
  /** A signed batch whose timestamp is further than this from now is a replay: refused (seconds). Default: 300. */
  SENDGRID_WEBHOOK_TOLERANCE_S: z.coerce.number().int().positive().default(300),
  /**
   * The largest employee file HR may upload (bytes); a larger one is refused with 413 before it
   * is stored. At most 32 MiB (next.config.ts buffers no more of a request body). Default:
   * 20971520 (20 MiB; a 50,000-row CSV is about 7 MiB).
   */
  IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .max(MAX_IMPORT_BYTES_CEILING, `IMPORT_MAX_BYTES must be at most ${MAX_IMPORT_BYTES_CEILING} (32 MiB)`)
    .default(DEFAULT_IMPORT_MAX_BYTES),
  /**
   * The most an uploaded XLSX's entries may unpack to, each and together, by its ZIP directory
   * (bytes): a larger one is refused with 413 before it is stored (the worker checks the real
   * inflation again with its own IMPORT_MAX_INFLATED_BYTES). Default: 83886080 (80 MiB, four
   * times the default upload limit).
   */
  IMPORT_MAX_INFLATED_BYTES: z.coerce.number().int().positive().default(DEFAULT_IMPORT_MAX_INFLATED_BYTES),
  /**
   * OpenTelemetry tracing of the web server's requests and the jobs they enqueue (HR's resend,
   * the Event Webhook's batches), by the standard OTEL_* variables: off unless an exporter or
   * an OTLP endpoint is set (docs/tracing.md). Started by src/instrumentation.ts.
   */
  ...otelEnvShape,
});

function isAddressOrRange(value: string): boolean {
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length || !address || !isIP(address)) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits <= (isIP(address) === 4 ? 32 : 128);
}

export type Env = Omit<z.infer<typeof schema>, 'BETTER_AUTH_SECRET'> & { BETTER_AUTH_SECRET: string };

let cached: Env | undefined;

/** The web's settings; throws a SettingsError (one line per problem) when they are wrong. */
export function env(): Env {
  if (cached) return cached;
  const e = parseEnv(schema, process.env);
  cached = { ...e, BETTER_AUTH_SECRET: e.BETTER_AUTH_SECRET ?? DEVELOPMENT_AUTH_SECRET };
  return cached;
}
