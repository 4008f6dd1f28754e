import type { HandlerFactory } from './deps.ts';

export const noopHandler: HandlerFactory<'noop'> = () => async () => {};
