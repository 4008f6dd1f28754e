import type { HandlerOf } from '../../definition.ts';
import type { noopJob } from './definition.ts';

export const noopHandler = (): HandlerOf<typeof noopJob> => async () => {};
