import Koa from 'koa';
import Router from '@koa/router';
import { auditRequest } from './audit.js';
import { createAdmission, levelsAllowed } from './auth.js';
import { jsonBody } from './body.js';
import { wrapInEnvelope } from './envelope.js';
import { writeError } from './error-handler.js';
import { idempotency } from './idempotency.js';
import { logRequest } from './logging.js';
import { handlerOf } from './reply.js';
import { checkAdmissible, checkRouted, openRequestState } from './request-state.js';
import type { ApiDeps, RouteDef } from './route.js';
import { allRoutes } from './routes/index.js';

/** Builds the platform API. The same app serves tests, `serve` and the benchmarks. */
export function createApp(deps: ApiDeps, routes: RouteDef[] = allRoutes): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.use(boundary(deps));
  const router = new Router();
  const chainOf = routeChain(deps);
  for (const route of routes) router[route.method](route.path, ...chainOf(route));
  app.use(router.routes());
  // Sets 405 or 501 with an Allow header; the boundary turns that into an error body.
  app.use(router.allowedMethods());
  return app;
}

/**
 * The first middleware: request state, version and draining checks, the one error boundary,
 * then the envelope, the audit log and the request log on the way out.
 */
function boundary(deps: ApiDeps): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const state = openRequestState(ctx, deps);
    try {
      checkAdmissible(ctx, deps);
      await next();
      checkRouted(ctx);
    } catch (err) {
      writeError(ctx, err, deps.logger);
    }
    wrapInEnvelope(ctx, state, deps.now());
    if (deps.audit) auditRequest(ctx, deps.audit);
    logRequest(ctx, state, deps.logger, started);
  };
}

/**
 * A route's steps in order: authentication, limits and permission (one step, as they are one
 * check of the caller), the JSON body, Idempotency-Key, then the handler. A read has no body
 * and no idempotency, so it runs as a single middleware: every Koa middleware is another
 * promise and closure per request, on the path that has to be fastest.
 */
function routeChain(deps: ApiDeps): (route: RouteDef) => Koa.Middleware[] {
  const admit = createAdmission(deps);
  const idempotent = idempotency(deps);
  return (route) => {
    const allowed = levelsAllowed(route.permission);
    const handle = handlerOf(route, deps);
    if (!route.body && !route.idempotent) {
      if (!allowed) return [handle];
      return [
        async (ctx) => {
          await admit(ctx, route, allowed);
          await handle(ctx);
        },
      ];
    }
    const chain: Koa.Middleware[] = [];
    if (allowed) {
      chain.push(async (ctx, next) => {
        await admit(ctx, route, allowed);
        await next();
      });
    }
    if (route.body) chain.push(jsonBody());
    if (route.idempotent) chain.push(idempotent);
    chain.push(handle);
    return chain;
  };
}
