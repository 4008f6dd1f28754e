/** The custom arg that names a scheduled send's batch in its events and Activity rows (mailer.ts, events.ts). */
export const BATCH_ARG = 'beton_batch';
