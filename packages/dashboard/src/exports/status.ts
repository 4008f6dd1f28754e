/**
 * A month export's status (`month_exports.status`):
 *
 *   queued ──(its job starts the file)──▶ building ──(the last part stored)──▶ ready
 *     └──────(the job gave up)──▶ failed ◀──(the job gave up)──┘
 *   failed ──(an admin retries the job)──▶ building
 *
 * `ready` is final (until the retention pass deletes the row after `expires_at`). HR asks for a
 * new export while one of the same kind is open (queued or building) and gets that one instead
 * (requests.ts). The statements that move it are build.ts's; the database refuses any other
 * change (db/src/status-machine.ts).
 */
import { defineStatusMachine } from '@beton/db/status-machine';
import type { ExportStatus } from './kinds.ts';

export const exportStatus = defineStatusMachine<ExportStatus>({
  table: 'month_exports',
  initial: ['queued'],
  transitions: {
    queued: ['building', 'failed'],
    building: ['ready', 'failed'],
    ready: [],
    failed: ['building'],
  },
});

/** Statuses of an export still being made: a new request of its kind gets it instead. */
export const OPEN_EXPORT_STATUSES = ['queued', 'building'] as const satisfies readonly ExportStatus[];
