/**
 * A service error that knows nothing of HTTP or tRPC: the API layer maps `code` to a
 * status in one place (apps/web's errorFormatter).
 */
export type AppErrorCode = 'NOT_FOUND' | 'INVALID_INPUT' | 'CONFLICT' | 'FORBIDDEN' | 'UNAUTHORIZED' | 'RATE_LIMITED';

export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly code: AppErrorCode,
    message: string,
    /** Field-level messages for forms, e.g. { email: 'Not a valid address' }. */
    readonly fieldErrors?: Record<string, string>,
  ) {
    super(message);
  }
}

export function notFound(what: string): AppError {
  return new AppError('NOT_FOUND', `${what} not found`);
}
