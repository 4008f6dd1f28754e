'use client';
/**
 * What a failed request says to the person at the screen: a sentence in the page's language,
 * never raw validation JSON. A service's own message (AppError) is kept in English, where it is
 * written for people; otherwise the message comes from the tRPC code.
 */
import { TRPCClientError } from '@trpc/client';
import { useLocale, useTranslations } from 'next-intl';

interface ErrorData {
  code?: string;
  fieldErrors?: Record<string, string | string[] | undefined> | null;
  requestId?: string;
}

export function errorData(error: unknown): ErrorData | undefined {
  return error instanceof TRPCClientError ? (error.data as ErrorData | undefined) : undefined;
}

export function isConflict(error: unknown): boolean {
  return errorData(error)?.code === 'CONFLICT';
}

/** A field's own error message from the server, if any. */
export function fieldError(error: unknown, field: string): string | null {
  const fe = errorData(error)?.fieldErrors?.[field];
  if (!fe) return null;
  return Array.isArray(fe) ? (fe[0] ?? null) : fe;
}

/** Looks like a machine dump (zod's issue list, JSON): never shown. */
function isMachineText(message: string): boolean {
  return /^\s*[[{]/.test(message);
}

export function useErrorText(): (error: unknown) => string {
  const t = useTranslations('errors');
  const locale = useLocale();
  return (error) => {
    if (!(error instanceof TRPCClientError)) return t('network');
    const data = errorData(error);
    const fields = Object.keys(data?.fieldErrors ?? {});
    switch (data?.code) {
      case 'BAD_REQUEST':
        if (locale === 'en' && !isMachineText(error.message)) return error.message;
        return fields.length ? t('badInput', { fields: fields.join(', ') }) : t('badInputNoField');
      case 'NOT_FOUND':
        return t('notFound');
      case 'FORBIDDEN':
        return locale === 'en' && !isMachineText(error.message) ? error.message : t('forbidden');
      case 'UNAUTHORIZED':
        return t('unauthorized');
      case 'CONFLICT':
        return locale === 'en' && !isMachineText(error.message) ? error.message : t('conflict');
      case 'TOO_MANY_REQUESTS':
        return t('rateLimited');
      case 'INTERNAL_SERVER_ERROR':
        return t('internal', { requestId: data.requestId ?? '?' });
      default:
        return !data ? t('network') : t('internal', { requestId: data.requestId ?? '?' });
    }
  };
}
