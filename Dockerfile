# syntax=docker/dockerfile:1
# One image for every Beton Node service (web, scheduler, worker-pdf, worker-email,
# migrate, simulators); the command picks the process. See docker-compose.yml, deploy/k8s.
# The runtime stage holds the built programs and the production dependencies only: no
# TypeScript runner, test runner, browser, second Node or embedded PostgreSQL.

ARG NODE_IMAGE=node:22-bookworm-slim

# ---- base ------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS base
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1 \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false

# The workspace manifests and what `npm ci`'s postinstall (`prisma generate`) reads.
FROM base AS manifests
COPY package.json package-lock.json ./
COPY apps/web/package.json apps/web/
COPY apps/worker/package.json apps/worker/
COPY packages/config/package.json packages/config/
COPY packages/dashboard/package.json packages/dashboard/
COPY packages/db/package.json packages/db/
COPY packages/jobs/package.json packages/jobs/
COPY packages/payroll/package.json packages/payroll/
COPY packages/people/package.json packages/people/
COPY packages/pdf/package.json packages/pdf/
COPY packages/simulators/package.json packages/simulators/
COPY packages/telemetry/package.json packages/telemetry/
COPY prisma.config.ts ./
COPY prisma ./prisma
COPY tooling/prisma-engine ./tooling/prisma-engine

# ---- deps: every dependency, to build (cached until a manifest or the schema changes) --
FROM manifests AS deps
RUN --mount=type=cache,target=/root/.npm npm ci
# Prisma's own schema engine for this platform: the image migrates with it, never with the
# WebAssembly stand-in (tooling/prisma-engine). Fails the build if it cannot be fetched.
RUN BETON_SCHEMA_ENGINE=native npx prisma version \
 && ls node_modules/@prisma/engines/schema-engine-*

# ---- build: Prisma client, the web app (Next.js) and the Node programs (dist/) ----------
FROM deps AS build
COPY . .
RUN npx prisma generate
RUN npm run build

# ---- prod-deps: production dependencies only --------------------------------------------
FROM manifests AS prod-deps
# --ignore-scripts: nothing is generated or downloaded here (the client is bundled into the
# web build, the native schema engine comes from the deps stage). npm keeps the optional
# peers of production packages that are also devDependencies (better-auth names vitest, vite
# names tsx): scripts/prune-optional-peers.mjs removes them, so the image has no test runner
# or TypeScript runner (deploy/test checks what stays).
COPY scripts/prune-optional-peers.mjs ./scripts/
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts \
 && node scripts/prune-optional-peers.mjs
COPY --from=deps /app/node_modules/@prisma/engines/ node_modules/@prisma/engines/

# ---- runtime -----------------------------------------------------------------------------
FROM base AS runtime
# tini as PID 1: passes SIGTERM on to node (graceful shutdown) and reaps zombies; openssl for
# Prisma's schema engine (migrate).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates openssl \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=3000 \
    HEALTH_PORT=9464 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=65536 \
    BETON_SCHEMA_ENGINE=native
# Files stay owned by root (read-only for the app); only Next's cache dir is writable.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=prod-deps /app/package.json /app/package-lock.json ./
COPY --from=prod-deps /app/apps ./apps
COPY --from=prod-deps /app/packages ./packages
# The job engine's own migrations (read by `beton migrate` through @beton/jobs/sql/*).
COPY packages/jobs/sql ./packages/jobs/sql
COPY prisma.config.ts ./
COPY prisma ./prisma
COPY tooling/prisma-engine/config.ts ./tooling/prisma-engine/
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/apps/web/.next ./apps/web/.next
COPY apps/web/next.config.ts ./apps/web/
RUN mkdir -p apps/web/.next/cache && chown -R node:node apps/web/.next/cache
USER node
EXPOSE 3000 9464
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=2", "--heap-growing-percent=50", "bin/beton.mjs", "worker", "--queue", "maintenance"]
