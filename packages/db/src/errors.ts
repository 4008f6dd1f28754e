import { maskUrl } from './url.ts';

/** The configured database does not answer. Carries a one-line message with the fix. */
export class DatabaseUnreachableError extends Error {
  override readonly name = 'DatabaseUnreachableError';
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(
      `Cannot reach PostgreSQL at ${maskUrl(url)} (${reason}). ` + 'Start that server, fix DATABASE_URL, or unset DATABASE_URL to use the embedded PostgreSQL.',
    );
  }
}
