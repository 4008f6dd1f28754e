# syntax=docker/dockerfile:1
# One image for every Beton Node service (web, scheduler, worker-pdf, worker-email,
# migrate, simulators); the command picks the process. See docker-compose.yml, deploy/k8s.

ARG NODE_IMAGE=node:22-bookworm-slim

# ---- base: runtime OS packages ------------------------------------------------------
FROM ${NODE_IMAGE} AS base
# tini as PID 1: forwards SIGTERM to npm/node (graceful shutdown) and reaps zombies
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates openssl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1 \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false

# ---- deps: install from the lockfile (cached until a manifest or the schema changes) --
FROM base AS deps
COPY package.json package-lock.json ./
COPY apps/web/package.json apps/web/
COPY apps/worker/package.json apps/worker/
COPY packages/db/package.json packages/db/
COPY packages/jobs/package.json packages/jobs/
COPY packages/payroll/package.json packages/payroll/
COPY packages/pdf/package.json packages/pdf/
COPY packages/simulators/package.json packages/simulators/
# postinstall runs `prisma generate`, which reads the schema and prisma.config.ts
COPY prisma.config.ts ./
COPY prisma ./prisma
COPY tooling ./tooling
RUN --mount=type=cache,target=/root/.npm npm ci

# ---- build: sources, Prisma client, Next.js production build -------------------------
FROM deps AS build
COPY . .
# idempotent if postinstall already generated the client
RUN npx prisma generate
# a syntactically valid URL for any module that reads it at build time; nothing connects
RUN DATABASE_URL=postgresql://build:build@localhost:5432/build npm run build -w @beton/web

# ---- runtime ---------------------------------------------------------------------------
FROM base AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    HEALTH_PORT=9464
# devDependencies stay: workers run through tsx and `migrate` needs the prisma CLI.
# Files stay owned by root (read-only for the app); only Next's cache dir is writable.
COPY --from=build /app /app
RUN mkdir -p apps/web/.next/cache && chown -R node:node apps/web/.next/cache
USER node
EXPOSE 3000 9464
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["npm", "run", "worker", "--", "--queue", "maintenance"]
