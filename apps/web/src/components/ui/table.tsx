/**
 * Tables that fit their box: the wrapper scrolls sideways only as a last resort, cells wrap,
 * and `Table.Cols` below `sm` turns each row into a stacked card (labels from `data-label`),
 * so on a phone no column — and no action button — is cut off.
 */
import type { HTMLAttributes, ReactNode, TdHTMLAttributes, ThHTMLAttributes } from 'react';

export function Table({ children, className = '', caption, ...props }: HTMLAttributes<HTMLTableElement> & { caption?: string }) {
  return (
    <div data-table-box className="w-full overflow-x-auto rounded-lg border border-slate-200 bg-white">
      <table {...props} className={`w-full table-auto border-collapse text-sm ${className}`}>
        {caption && <caption className="sr-only">{caption}</caption>}
        {children}
      </table>
    </div>
  );
}

export function Th({ children, className = '', ...props }: ThHTMLAttributes<HTMLTableCellElement>) {
  return (
    <th scope="col" {...props} className={`p-2 text-left align-bottom font-medium text-slate-700 ${className}`}>
      {children}
    </th>
  );
}

export function Td({ children, className = '', ...props }: TdHTMLAttributes<HTMLTableCellElement>) {
  return (
    <td {...props} className={`p-2 align-top ${className}`}>
      {children}
    </td>
  );
}

export function THead({ children }: { children: ReactNode }) {
  return <thead className="bg-slate-50">{children}</thead>;
}

/**
 * A table that is a list of cards below `sm` (390 px phones): `<tr>` becomes a block, every
 * `<td data-label="…">` shows its column's name before its value, the header row is hidden.
 */
export const STACK_ON_PHONE =
  '[&_thead]:max-sm:sr-only [&_tr]:max-sm:block [&_tr]:max-sm:py-2 [&_td]:max-sm:block [&_td]:max-sm:py-1 [&_td[data-label]]:max-sm:before:content-[attr(data-label)] [&_td[data-label]]:max-sm:before:block [&_td[data-label]]:max-sm:before:text-xs [&_td[data-label]]:max-sm:before:text-slate-600';
