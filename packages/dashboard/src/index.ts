export * from './errors.ts';
export * from './types.ts';
export * from './time.ts';
export * from './runs.ts';
export * from './employees.ts';
export * from './admin.ts';
export * from './schemas.ts';
export * from './delivery.ts';
