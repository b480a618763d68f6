import type Koa from 'koa';
import { requestState } from './request-state.js';
import { JsonBytes, type ApiDeps, type Reply, type RouteDef } from './route.js';
import { parseInput, refuseUnacceptableText } from './validate.js';

/**
 * The route's last step: validates params, query and body, calls the handler and sends its
 * reply. In an idempotent request the handler's store is the request's transaction, so
 * whatever it writes commits with the stored response.
 */
export function handlerOf(route: RouteDef, deps: ApiDeps): (ctx: Koa.Context) => Promise<void> {
  return async (ctx) => {
    const state = requestState(ctx);
    // No query string (most reads): nothing to parse or look through.
    const query = ctx.querystring === '' ? {} : ctx.query;
    refuseUnacceptableText(route, ctx.params, query, ctx.request.body);
    const reply = await route.handler(
      {
        params: route.params ? parseInput(route.params, ctx.params, 'params') : undefined,
        query: route.query ? parseInput(route.query, { ...ctx.query }, 'query') : undefined,
        body: route.body ? parseInput(route.body, ctx.request.body ?? {}, 'body') : undefined,
        key: state.key,
        ctx,
      },
      state.transaction ? { ...deps, db: state.transaction } : deps,
    );
    sendReply(ctx, reply);
  };
}

export function sendReply(ctx: Koa.Context, reply: Reply): void {
  if (reply.headers) {
    for (const [name, value] of Object.entries(reply.headers)) ctx.set(name, value);
  }
  ctx.status = reply.status ?? 200;
  if (reply.body instanceof JsonBytes) {
    requestState(ctx).jsonBytes = true;
    // The header itself: `ctx.type = 'json'` looks the type up on every request.
    ctx.set('Content-Type', 'application/json; charset=utf-8');
    ctx.body = reply.body.bytes;
  } else if (reply.body !== undefined) {
    ctx.body = reply.body;
  }
}
