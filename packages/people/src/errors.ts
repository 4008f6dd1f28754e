/**
 * A refusal of an employee service, by code; `fieldErrors` maps a field (`email`, `salary.basic`)
 * to a reason key (reasons.ts). The web maps it to its AppError in one place
 * (apps/web/src/server/people-adapter.ts).
 */
export type PeopleErrorCode = 'NOT_FOUND' | 'INVALID_INPUT' | 'CONFLICT';

export class PeopleError extends Error {
  override readonly name = 'PeopleError';
  constructor(
    readonly code: PeopleErrorCode,
    message: string,
    readonly fieldErrors?: Record<string, string>,
  ) {
    super(message);
  }
}
