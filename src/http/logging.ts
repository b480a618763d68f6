import type Koa from 'koa';
import type { Logger } from 'pino';
import type { RequestState } from './request-state.js';

/** One `request` line per answered request at info level; `started` is from performance.now(). */
export function logRequest(
  ctx: Koa.Context,
  state: RequestState,
  logger: Logger,
  started: number,
): void {
  if (!logger.isLevelEnabled('info')) return;
  logger.info(
    {
      request_id: state.requestId,
      method: ctx.method,
      path: ctx.path,
      status: ctx.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      key_id: state.key?.id,
    },
    'request',
  );
}
