/** The whole engine, worker runtime included (graphile-worker): for worker processes and tools. Others import `@beton/jobs/client`. */
export * from './client.ts';
export * from './engine/process-guards.ts';
export * from './engine/worker.ts';
export * from './jobs/handlers.ts';
export * from './migrate.ts';
