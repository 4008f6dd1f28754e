/**
 * The side-effect-free entry of the job engine: define, enqueue, classify errors, read the
 * queue's state, pause/resume, schedules and the status machine. It loads neither
 * graphile-worker nor the worker runtime (engine/worker.ts, migrate.ts: `@beton/jobs`), so the
 * web app and the domain packages import this (test: apps/web/test/import-graph.test.ts).
 */
export * from './admin.ts';
export * from './backoff.ts';
export * from './connection-retry.ts';
export { refreshWakeupStatistics } from './wakeups.ts';
export * from './definition.ts';
export * from './engine/config-check.ts';
export * from './engine/pause.ts';
export * from './enqueue.ts';
export * from './errors.ts';
export * from './job-conditions.ts';
export * from './jobs/index.ts';
export * from './lanes.ts';
export * from './links.ts';
export * from './limits.ts';
export * from './lock.ts';
export * from './logger.ts';
export * from './promote.ts';
export * from './schedules.ts';
export * from './stats.ts';
export * from './supersede.ts';
export * from './sweeper.ts';
export * from './transitions.ts';
export * from './db.ts';
