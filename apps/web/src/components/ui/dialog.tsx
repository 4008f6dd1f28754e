'use client';
/**
 * Confirmation dialogs (Radix AlertDialog) instead of the browser's `confirm()`: labelled,
 * focus-trapped, in the page's language. `await confirmDialog({ title, ... })` resolves true
 * when the user confirms; `<ConfirmHost />` sits in the root layout.
 */
import { AlertDialog } from 'radix-ui';
import { setNonce } from 'get-nonce';
import { useTranslations } from 'next-intl';
import { useEffect, useState, type ReactNode } from 'react';
import { Button } from '../ui.tsx';

export interface ConfirmInput {
  title: string;
  description?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
}
interface Pending extends ConfirmInput {
  resolve: (ok: boolean) => void;
}

let open: ((p: Pending) => void) | null = null;

export function confirmDialog(input: ConfirmInput): Promise<boolean> {
  return new Promise((resolve) => {
    if (!open) return resolve(false);
    open({ ...input, resolve });
  });
}

export function ConfirmHost() {
  const t = useTranslations('common');
  const [pending, setPending] = useState<Pending | null>(null);
  useEffect(() => {
    // Radix's scroll lock adds one <style> element: it carries this page's CSP nonce, read from
    // Next's own scripts (the browser hides the attribute, not the property).
    const nonce = document.querySelector<HTMLScriptElement>('script[nonce]')?.nonce;
    if (nonce) setNonce(nonce);
    open = (p) => setPending(p);
    return () => {
      open = null;
    };
  }, []);
  const close = (ok: boolean) => {
    pending?.resolve(ok);
    setPending(null);
  };
  return (
    <AlertDialog.Root
      open={pending !== null}
      onOpenChange={(o) => {
        if (!o) close(false);
      }}
    >
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-40 bg-slate-900/40" />
        <AlertDialog.Content
          data-testid="confirm-dialog"
          className="fixed top-1/2 left-1/2 z-50 w-[calc(100%-2rem)] max-w-md -translate-x-1/2 -translate-y-1/2 rounded-lg bg-white p-5 shadow-xl"
        >
          <AlertDialog.Title className="text-lg font-semibold">{pending?.title}</AlertDialog.Title>
          {pending?.description ? (
            <AlertDialog.Description className="mt-2 text-sm text-slate-700">{pending.description}</AlertDialog.Description>
          ) : (
            <AlertDialog.Description className="sr-only">{pending?.title}</AlertDialog.Description>
          )}
          <div className="mt-5 flex flex-wrap justify-end gap-2">
            <AlertDialog.Cancel asChild>
              <Button variant="secondary">{t('cancel')}</Button>
            </AlertDialog.Cancel>
            <AlertDialog.Action asChild>
              <Button variant={pending?.danger ? 'danger' : 'primary'} onClick={() => close(true)}>
                {pending?.confirmLabel}
              </Button>
            </AlertDialog.Action>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
