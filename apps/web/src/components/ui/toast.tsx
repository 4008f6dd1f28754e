'use client';
/**
 * Toasts (Radix Toast): short feedback after an action ("Retried 3 jobs"), announced to screen
 * readers by Radix's live region, gone after a few seconds (feedback never goes stale on the
 * page). Call `toast({ title, variant })` from anywhere; `<Toaster />` sits in the root layout.
 */
import { Toast } from 'radix-ui';
import { useTranslations } from 'next-intl';
import { useEffect, useState } from 'react';

export interface ToastInput {
  title: string;
  description?: string;
  variant?: 'success' | 'error' | 'info';
  testId?: string;
}
interface ToastItem extends ToastInput {
  id: number;
}

let nextId = 1;
const listeners = new Set<(t: ToastItem) => void>();

export function toast(input: ToastInput): void {
  const item = { ...input, id: nextId++ };
  for (const l of listeners) l(item);
}

const VARIANT = {
  success: 'border-emerald-300 bg-emerald-50 text-emerald-900',
  error: 'border-red-300 bg-red-50 text-red-900',
  info: 'border-slate-300 bg-white text-slate-900',
};

export function Toaster() {
  const t = useTranslations('common');
  const [items, setItems] = useState<ToastItem[]>([]);
  // Rendered after hydration only: Radix puts an inline style on its viewport, which the page's
  // CSP refuses in server-rendered HTML (style attributes set from script are allowed).
  const [mounted, setMounted] = useState(false);
  useEffect(() => {
    setMounted(true);
    const add = (item: ToastItem) => setItems((list) => [...list.slice(-3), item]);
    listeners.add(add);
    return () => {
      listeners.delete(add);
    };
  }, []);
  if (!mounted) return null;
  return (
    <Toast.Provider swipeDirection="right" duration={6_000} label={t('notifications')}>
      {items.map((item) => (
        <Toast.Root
          key={item.id}
          type={item.variant === 'error' ? 'foreground' : 'background'}
          data-testid={item.testId ?? 'toast'}
          onOpenChange={(open) => {
            if (!open) setItems((list) => list.filter((x) => x.id !== item.id));
          }}
          className={`flex items-start gap-3 rounded-lg border p-3 shadow-md ${VARIANT[item.variant ?? 'info']}`}
        >
          <div className="flex-1">
            <Toast.Title className="text-sm font-medium">{item.title}</Toast.Title>
            {item.description && <Toast.Description className="mt-1 text-sm">{item.description}</Toast.Description>}
          </div>
          <Toast.Close className="rounded px-1 text-sm underline">
            <span aria-hidden="true">×</span>
            <span className="sr-only">{t('dismiss')}</span>
          </Toast.Close>
        </Toast.Root>
      ))}
      <Toast.Viewport className="fixed right-0 bottom-0 z-50 m-0 flex w-full max-w-sm list-none flex-col gap-2 p-4 outline-none" />
    </Toast.Provider>
  );
}
