/**
 * The failed-jobs page's filter lives in the address (`/admin/failed?errorCode=timeout&fromDay=…`),
 * so a filtered list can be linked, and the job page's "back" returns to it. A value the server
 * would refuse is reported by name and left out, never sent.
 */
import { ERROR_KINDS, type ErrorKind } from '@beton/dashboard/types';
import { isCalendarDay } from '@beton/db/month';

/** Days are 'YYYY-MM-DD' in Dhaka time, as the times on the page; the server reads them so. */
export interface Filter {
  companyId?: string;
  task?: string;
  errorCode?: string;
  errorKind?: ErrorKind;
  fromDay?: string;
  toDay?: string;
  q?: string;
}
export type View = 'failed' | 'superseded';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEYS = ['companyId', 'task', 'errorCode', 'errorKind', 'fromDay', 'toDay', 'q'] as const;

const VALID: Record<(typeof KEYS)[number], (v: string) => boolean> = {
  companyId: (v) => UUID.test(v),
  task: (v) => v.length <= 100,
  errorCode: (v) => v.length <= 100,
  errorKind: (v) => (ERROR_KINDS as readonly string[]).includes(v),
  fromDay: isCalendarDay,
  toDay: isCalendarDay,
  q: (v) => v.length <= 200,
};

export function parseFilter(params: URLSearchParams): { filter: Filter; view: View; invalid: Array<{ key: string; value: string }> } {
  const filter: Record<string, string> = {};
  const invalid: Array<{ key: string; value: string }> = [];
  for (const key of KEYS) {
    const value = params.get(key);
    if (value === null || value === '') continue;
    if (VALID[key](value)) filter[key] = value;
    else invalid.push({ key, value });
  }
  const v = params.get('view');
  if (v !== null && v !== 'failed' && v !== 'superseded') invalid.push({ key: 'view', value: v });
  return { filter, view: v === 'superseded' ? 'superseded' : 'failed', invalid };
}

export function filterQuery(filter: Filter, view: View): string {
  const params = new URLSearchParams();
  for (const key of KEYS) {
    const value = filter[key];
    if (value) params.set(key, value);
  }
  if (view !== 'failed') params.set('view', view);
  return params.toString();
}
