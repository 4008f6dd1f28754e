'use client';
/**
 * A file field of ours, in the page's language: a button "ফাইল বেছে নিন" / "Choose a file" and the
 * chosen file's name, instead of the browser's own "Choose File · No file chosen" (the browser's
 * language). The real file input stays in the page (keyboard focus, drag and drop, the form),
 * visually hidden; its button is its label.
 */
import { useTranslations } from 'next-intl';
import { useState, type ReactNode } from 'react';

export function FileInput({
  id,
  label,
  accept,
  onChange,
  describedBy,
}: {
  id: string;
  label: ReactNode;
  accept?: string;
  onChange: (file: File | null) => void;
  describedBy?: string;
}) {
  const t = useTranslations('input');
  const [name, setName] = useState<string | null>(null);
  return (
    <div className="min-w-0 text-sm">
      <span id={`${id}-label`} className="block font-medium text-slate-800">
        {label}
      </span>
      <div className="mt-1 flex flex-wrap items-center gap-2">
        <input
          id={id}
          name="file"
          type="file"
          accept={accept}
          aria-labelledby={`${id}-label ${id}-button`}
          aria-describedby={[`${id}-chosen`, describedBy].filter(Boolean).join(' ')}
          onChange={(e) => {
            const file = e.target.files?.[0] ?? null;
            setName(file?.name ?? null);
            onChange(file);
          }}
          className="peer sr-only"
        />
        <label
          id={`${id}-button`}
          htmlFor={id}
          className="cursor-pointer rounded border border-slate-400 bg-white px-3 py-1.5 font-medium text-slate-900 peer-focus-visible:outline-2 peer-focus-visible:outline-offset-2 peer-focus-visible:outline-indigo-600 hover:bg-slate-50"
        >
          {t('chooseFile')}
        </label>
        <span id={`${id}-chosen`} data-testid={`${id}-chosen`} className="break-all text-slate-700" translate="no">
          {name ?? <span translate="yes">{t('noFile')}</span>}
        </span>
      </div>
    </div>
  );
}
