'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Card, L } from '../../../components/ui.tsx';
import { useTRPC } from '../../../lib/trpc.tsx';

/** Every user-visible string of the page (English + Bengali). */
const M = {
  title: { en: 'Company settings', bn: 'কোম্পানির সেটিংস' },
  protect: { en: 'Password-protect salary slips', bn: 'বেতন স্লিপ পাসওয়ার্ড দিয়ে সুরক্ষিত করুন' },
  protectHelp: {
    en: 'Each slip PDF is encrypted (AES-256). The password is the employee\'s date of birth as DDMMYYYY (born 5 March 1990: 05031990); the email tells them so. A slip sent to a wrong address then shows nothing.',
    bn: 'প্রতিটি স্লিপ পিডিএফ এনক্রিপ্ট করা হয় (AES-256)। পাসওয়ার্ড হলো কর্মীর জন্মতারিখ DDMMYYYY আকারে (৫ মার্চ ১৯৯০ হলে: 05031990); ইমেইলে তা জানানো হয়। ভুল ঠিকানায় গেলে স্লিপে কিছুই দেখা যায় না।',
  },
  missing: {
    en: (n: number) => `${n.toLocaleString('en-US')} employees have no date of birth: their slips cannot be protected and will fail until it is added.`,
    bn: (n: number) => `${n.toLocaleString('bn-BD')} জন কর্মীর জন্মতারিখ নেই: তা যোগ না করা পর্যন্ত তাঁদের স্লিপ তৈরি হবে না।`,
  },
  saved: { en: 'Saved.', bn: 'সংরক্ষিত।' },
  on: { en: 'On: slips are password-protected', bn: 'চালু: স্লিপ পাসওয়ার্ড-সুরক্ষিত' },
  off: { en: 'Off: slips are not protected', bn: 'বন্ধ: স্লিপ সুরক্ষিত নয়' },
  loading: { en: 'Loading…', bn: 'লোড হচ্ছে…' },
} as const;

export default function SettingsPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const settings = useQuery(trpc.company.get.queryOptions());
  const save = useMutation(trpc.company.setProtectSlips.mutationOptions({ onSuccess: () => qc.invalidateQueries({ queryKey: trpc.company.get.queryKey() }) }));
  const s = settings.data;
  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold"><L {...M.title} /></h1>
      {settings.isLoading && <p><L {...M.loading} /></p>}
      {s && (
        <Card>
          <p className="mb-3 font-medium">{s.name}</p>
          <label className="flex items-start gap-3">
            <input type="checkbox" className="mt-1 h-5 w-5" aria-label="password-protect salary slips" data-testid="protect-slips" checked={s.protectSlips} disabled={save.isPending}
              onChange={(e) => save.mutate({ protectSlips: e.target.checked })} />
            <span>
              <span className="font-medium"><L {...M.protect} /></span>
              <span className="mt-1 block text-sm text-slate-700">{M.protectHelp.en}</span>
              <span lang="bn" className="mt-1 block text-sm text-slate-700">{M.protectHelp.bn}</span>
            </span>
          </label>
          <p data-testid="protect-state" className="mt-3 text-sm font-medium"><L {...(s.protectSlips ? M.on : M.off)} /></p>
          {s.protectSlips && s.withoutDateOfBirth > 0 && (
            <p role="alert" data-testid="missing-dob" className="mt-2 rounded border border-amber-300 bg-amber-50 p-2 text-sm text-amber-900">
              {M.missing.en(s.withoutDateOfBirth)} <span lang="bn">{M.missing.bn(s.withoutDateOfBirth)}</span>
            </p>
          )}
          {save.error && <p role="alert" className="mt-2 text-sm text-red-700">{save.error.message}</p>}
          {save.isSuccess && <p role="status" className="mt-2 text-sm text-emerald-800"><L {...M.saved} /></p>}
        </Card>
      )}
    </div>
  );
}
