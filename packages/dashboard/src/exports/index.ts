export * from './kinds.ts';
export * from './rows.ts';
export * from './parts.ts';
export * from './build.ts';
export * from './requests.ts';
