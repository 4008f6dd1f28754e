'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { TRPCClientError } from '@trpc/client';
import { useEffect, useState } from 'react';
import { useTRPC } from '../lib/trpc.tsx';
import { Button, Card, L } from './ui.tsx';

/** Every user-visible string of the card (English + Bengali). */
const M = {
  title: { en: 'Date of birth', bn: 'জন্মতারিখ' },
  help: { en: 'The password of this employee\'s protected slips (DDMMYYYY).', bn: 'এই কর্মীর সুরক্ষিত স্লিপের পাসওয়ার্ড (DDMMYYYY)।' },
  missing: { en: 'Missing: with protected slips on, this employee\'s slips cannot be made until it is added.', bn: 'নেই: সুরক্ষিত স্লিপ চালু থাকলে এটি যোগ না করা পর্যন্ত এই কর্মীর স্লিপ তৈরি হবে না।' },
  save: { en: 'Save date of birth', bn: 'জন্মতারিখ সংরক্ষণ' },
  saved: { en: 'Saved', bn: 'সংরক্ষিত' },
} as const;

/** The employee page's date-of-birth card (issue 22: password-protected slips). */
export function DateOfBirthCard({ id }: { id: number }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const current = useQuery(trpc.dateOfBirth.get.queryOptions({ id }));
  const [value, setValue] = useState('');
  useEffect(() => { setValue(current.data?.dateOfBirth ?? ''); }, [current.data?.dateOfBirth]);
  const save = useMutation(trpc.dateOfBirth.set.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.dateOfBirth.get.queryKey({ id }) }) }));
  const error = save.error instanceof TRPCClientError ? ((save.error.data as { fieldErrors?: Record<string, string> } | undefined)?.fieldErrors?.dateOfBirth ?? save.error.message) : null;
  return (
    <Card>
      <h2 className="mb-1 font-semibold"><L {...M.title} /></h2>
      <p className="mb-2 text-sm text-slate-700"><L {...M.help} /></p>
      {current.data && !current.data.dateOfBirth && current.data.protectSlips && <p role="alert" data-testid="dob-missing" className="mb-2 text-sm text-amber-900"><L {...M.missing} /></p>}
      <form className="flex flex-wrap items-center gap-2" onSubmit={(e) => { e.preventDefault(); save.mutate({ id, dateOfBirth: value || null }); }}>
        <input aria-label="date of birth" type="date" value={value} onChange={(e) => setValue(e.target.value)} className="rounded border border-slate-300 px-2 py-1" />
        <Button type="submit" disabled={save.isPending}><L {...M.save} /></Button>
      </form>
      {error && <p role="alert" className="mt-2 text-sm text-red-700">{error}</p>}
      {save.isSuccess && <p data-testid="dob-saved" className="mt-2 text-sm text-emerald-800"><L {...M.saved} /></p>}
    </Card>
  );
}
