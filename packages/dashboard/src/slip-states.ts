/**
 * The slip states HR reads, one word for one thing on every page: the run card, past months,
 * the employee list and the employee page. Here are their keys and how a run's job counts
 * become a tally of them that adds up to the run's employees; their words and meanings are in
 * the console's catalogues (`slipState.<key>.word` / `.meaning`), shown as one glossary.
 *
 * A new state (e.g. a send whose outcome is not known yet) is one more key in SLIP_STATE_WORDS
 * (and, when it is counted, in SLIP_STAGES with its line in slipStages) plus its catalogue entry.
 */
import type { StatusCounts } from './types.ts';

/**
 * A run's slips per stage: with NO_JOB they add up to the run's employees. Each slip has one live
 * attempt (HR's resend closes the failed one before it as superseded, and a delivered slip closes
 * the others), so superseded jobs are not counted.
 */
export const SLIP_STAGES = ['done', 'running', 'queued', 'retrying', 'failed'] as const;
export type SlipStage = (typeof SLIP_STAGES)[number];
export type SlipStageCounts = Record<SlipStage, number>;

/** The glossary's words (catalogue keys `slipState.<key>`). */
export const SLIP_STATE_WORDS = ['sent', 'queued', 'running', 'retrying', 'failed', 'stuck', 'none', 'rendered', 'open'] as const;
export type SlipStateWord = (typeof SLIP_STATE_WORDS)[number];

/**
 * The word of each key a page may hold: a run stage ('done' is a sent slip), an employee's slip
 * status (SLIP_STATUSES of employees.ts), 'stuck' (not moving, counted apart) and 'open' (still on
 * its way: queued, running or retrying).
 */
export const SLIP_WORD_OF: Record<SlipStage | SlipStateWord, SlipStateWord> = {
  done: 'sent',
  sent: 'sent',
  queued: 'queued',
  running: 'running',
  retrying: 'retrying',
  failed: 'failed',
  stuck: 'stuck',
  none: 'none',
  rendered: 'rendered',
  open: 'open',
};

/**
 * Slips per stage from the run's job counts (superseded jobs are not attempts any more and are
 * left out): a slip in its email stage is counted there, not again by its done render. The rest
 * of the run's employees have no job (`withoutJob`: an administrator discarded it).
 */
export function slipStages(render: StatusCounts, email: StatusCounts, total: number): { slips: SlipStageCounts; withoutJob: number } {
  const slips: SlipStageCounts = {
    done: email.done,
    running: render.running + email.running,
    retrying: render.retrying + email.retrying,
    failed: render.failed + email.failed,
    queued: render.queued + email.queued,
  };
  const counted = SLIP_STAGES.reduce((n, s) => n + slips[s], 0);
  return { slips, withoutJob: Math.max(0, total - counted) };
}
