'use client';
/**
 * The slip states in words, one word for one thing on every HR page (the run card, past months,
 * the employee list and page), from one glossary: keys and counting in
 * @beton/dashboard/slip-states, words and meanings in the catalogue (`slipState.<key>`).
 */
import { SLIP_WORD_OF, type SlipStage, type SlipStateWord } from '@beton/dashboard/slip-states';
import { useTranslations } from 'next-intl';
import { useFmt } from '../lib/format.ts';

/** Badge colours by meaning (text/background at least 4.5:1, WCAG AA): done green, moving blue, waiting grey, trouble red/orange. */
const COLORS: Record<SlipStateWord, string> = {
  sent: 'bg-emerald-100 text-emerald-900',
  queued: 'bg-slate-100 text-slate-800',
  running: 'bg-sky-100 text-sky-900',
  retrying: 'bg-amber-100 text-amber-900',
  failed: 'bg-red-100 text-red-900',
  stuck: 'bg-orange-100 text-orange-900',
  none: 'bg-slate-100 text-slate-800',
  rendered: 'bg-violet-100 text-violet-900',
  open: 'bg-sky-100 text-sky-900',
};

/** A stage or state key ('done', 'sent', 'none', …) as the glossary's word. */
export function useSlipWord(): (key: SlipStage | SlipStateWord) => string {
  const t = useTranslations('slipState');
  return (key) => t(`${SLIP_WORD_OF[key]}.word`);
}

export function SlipStateBadge({ state }: { state: SlipStage | SlipStateWord }) {
  const word = useSlipWord();
  return (
    <span data-status={state} className={`inline-block rounded px-2 py-0.5 text-xs font-medium ${COLORS[SLIP_WORD_OF[state]]}`}>
      {word(state)}
    </span>
  );
}

/** The words a page uses, with what each means: one glossary, opened on demand. */
export function SlipGlossary({ words }: { words: readonly SlipStateWord[] }) {
  const t = useTranslations('slipState');
  return (
    <details data-testid="glossary" className="text-sm text-slate-800">
      <summary className="cursor-pointer text-indigo-700 underline">{t('title')}</summary>
      <dl className="mt-2 grid gap-x-3 gap-y-1 sm:grid-cols-[max-content_1fr]">
        {words.map((w) => (
          <div key={w} className="contents" data-word={w}>
            <dt className="font-medium">
              <SlipStateBadge state={w} />
            </dt>
            <dd>{t(`${w}.meaning`)}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

/**
 * A run's slips per stage and the employees with no job: the numbers add up to `employees`,
 * which is shown beside them ("sent + queued + running + retrying + failed + no job = employees").
 */
export function SlipTally({
  slips,
  withoutJob,
  employees,
  testId,
}: {
  slips: Record<SlipStage, number>;
  withoutJob: number;
  employees: number;
  testId: string;
}) {
  const t = useTranslations('slipState');
  const word = useSlipWord();
  const { num } = useFmt();
  const order: SlipStage[] = ['done', 'queued', 'running', 'retrying', 'failed'];
  return (
    <dl data-testid={testId} className="grid grid-cols-2 gap-2 text-sm min-[480px]:grid-cols-4 sm:grid-cols-7">
      {order.map((st) => (
        <div key={st} data-stage={st} data-count={slips[st]}>
          <dt className="text-slate-700">{word(st)}</dt>
          <dd className="font-medium">{num(slips[st])}</dd>
        </div>
      ))}
      <div data-stage="none" data-count={withoutJob}>
        <dt className="text-slate-700">{word('none')}</dt>
        <dd className="font-medium">{num(withoutJob)}</dd>
      </div>
      <div data-stage="employees" data-count={employees} className="sm:border-l sm:border-slate-300 sm:pl-2">
        <dt className="text-slate-700">{t('employees')}</dt>
        <dd className="font-semibold">{num(employees)}</dd>
      </div>
    </dl>
  );
}
