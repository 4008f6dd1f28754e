/**
 * The admins' console and CLI reads and actions, one concern per module: the dead-letter queue
 * (admin/dlq.ts), queues and throughput (admin/throughput.ts), workers and stuck jobs
 * (admin/workers.ts), schedules (admin/schedules.ts) and the CLI's job list (admin/job-list.ts).
 */
export * from './admin/dlq.ts';
export * from './admin/throughput.ts';
export * from './admin/workers.ts';
export * from './admin/schedules.ts';
export * from './admin/job-list.ts';
