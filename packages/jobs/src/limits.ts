/**
 * Limits held across every worker process on every machine (SPEC R4), split along its seams:
 * limits/store.ts (the store's interface), places.ts (a rate limit's places: pure arithmetic),
 * clock.ts (the store's clock seen from here), postgres-store.ts and redis-store.ts (the two
 * stores), wait.ts (waiting for a slot or a rate place).
 */
export * from './limits/store.ts';
export * from './limits/places.ts';
export * from './limits/clock.ts';
export * from './limits/postgres-store.ts';
export * from './limits/redis-store.ts';
export * from './limits/wait.ts';
