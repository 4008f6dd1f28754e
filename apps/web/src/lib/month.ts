/**
 * "This month" for the pages' defaults (the new employee's first salary month, an import's
 * effective month, the employee list's month): the calendar month in the product's time zone
 * (Asia/Dhaka, TIME_ZONE), not UTC's — from 18:00 UTC on a month's last day it is already the
 * next month in Dhaka.
 */
import { monthAt } from '@beton/db/month';
import { TIME_ZONE } from '../i18n/config.ts';

export function thisMonth(now: Date = new Date(), timeZone: string = TIME_ZONE): string {
  return monthAt(now, timeZone);
}
