export * from './env.ts';
