import Koa from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { ApiKeyRow } from '../db/schema.js';
import { findApiKey } from '../domain/access/api-keys.js';
import { AppError } from '../errors.js';
import { findTextFault, isAcceptableText } from '../text.js';
import { SecretBox } from '../domain/integrations/secret-box.js';
import { markup } from '../markup.js';
import { dashboardErrorOf, errorPageBody } from './error-page.js';
import { page, type Viewer } from './layout.js';
import { Formatter, localeOf } from './format.js';
import { SCRIPT, SCRIPT_PATH, STYLESHEET, STYLESHEET_PATH } from './assets.js';
import { FAVICON, FAVICON_CACHE, FAVICON_PATH } from './favicon.js';
import type { DashboardDeps, DashContext, DashRoute } from './route.js';
import { SESSION_COOKIE, SESSION_TTL_MS, SessionSigner, SignInLimiter } from './session.js';
import { keyPages } from './pages/keys.js';
import { productPages } from './pages/products.js';
import { feedPages } from './pages/feeds.js';
import { analyticsPages } from './pages/analytics.js';
import { webhookPages } from './pages/webhooks.js';
import { integrationPages } from './pages/integrations.js';
import { discoveryPages } from './pages/discovery.js';

export const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data: https:; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const LEVELS: Record<DashRoute['permission'], readonly string[]> = {
  read: ['read_only', 'read_write', 'admin'],
  write: ['read_write', 'admin'],
  admin: ['admin'],
};

export interface DashboardOptions {
  /** The session signing secret (default: the integrations' key, SECRET_KEY or DATA_DIR/secret.key). */
  secret?: Buffer;
  signInLimiter?: SignInLimiter;
  /** Starts a pipeline run (the server's schedule, or a run of its own). */
  publish?: (trigger: string) => void;
}

/** Renders a page into the response (see page() in layout.ts). */
type Render = DashContext['render'];

/** The dashboard's pages, each with who may see it (the sign-in pages are apart). */
const pageRoutes: DashRoute[] = [
  {
    method: 'get',
    path: '/dashboard',
    permission: 'read',
    handler: async (ctx) => {
      ctx.status = 303;
      ctx.redirect('/dashboard/products');
    },
  },
  ...keyPages,
  ...productPages,
  ...feedPages,
  ...analyticsPages,
  ...webhookPages,
  ...integrationPages,
  ...discoveryPages,
];

/**
 * The merchant dashboard: server-rendered pages under /dashboard that call the same domain
 * functions as the API routes. Signed in with an API key; the session holds the key's id.
 */
export function createDashboard(deps: DashboardDeps, options: DashboardOptions = {}): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;
  const renderTo = renderer(deps.config.STORE_NAME);
  const sessions = new Sessions(deps, options);
  app.use(errorPages(deps, renderTo));
  app.use(
    bodyParser({ enableTypes: ['form'], formLimit: '256kb', encoding: 'utf-8' }) as Koa.Middleware,
  );
  app.use(refuseUnacceptableText(renderTo));
  const router = new Router();
  assetRoutes(router);
  signInRoutes(router, deps, sessions, options.signInLimiter ?? new SignInLimiter(), renderTo);
  for (const route of pageRoutes) {
    router[route.method](route.path, pageHandler(route, sessions, renderTo, options));
  }
  app.use(router.routes());
  app.use(async (ctx) => {
    renderTo(ctx, undefined)(
      'Not found',
      '',
      markup`<p>There is no such page. <a href="/dashboard">Go to the dashboard</a>.</p>`,
      404,
    );
  });
  return app;
}

/**
 * Text a store cannot hold (src/text.ts) in a form field or query parameter: refused as the API
 * refuses it (CONTRACT part 6), before any page reads it; nothing is changed.
 */
function refuseUnacceptableText(
  renderTo: (ctx: Koa.Context, viewer: Viewer | undefined) => Render,
): Koa.Middleware {
  return async (ctx, next) => {
    const fault =
      findTextFault({ ...ctx.query }) ?? findTextFault((ctx.request as { body?: unknown }).body);
    if (!fault) return next();
    renderTo(ctx, undefined)(
      'Error',
      '',
      markup`<div class="error" role="alert">${fault.field} ${fault.reason}. Nothing was changed.</div>
        <p><a href="/dashboard">Back to the dashboard</a></p>`,
      422,
    );
  };
}

/** A page renderer for a response and its viewer (none on the sign-in and error pages). */
function renderer(storeName: string) {
  return (ctx: Koa.Context, viewer: Viewer | undefined): Render =>
    (title, current, body, status = 200, refreshSeconds) => {
      ctx.status = status;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = page({
        title,
        current,
        body,
        storeName,
        refreshSeconds,
        ...(viewer ? { viewer } : {}),
      }).value;
    };
}

/** The security headers of every answer, and an error page for whatever a handler threw. */
function errorPages(
  deps: DashboardDeps,
  renderTo: (ctx: Koa.Context, viewer: Viewer | undefined) => Render,
): Koa.Middleware {
  return async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'same-origin');
    try {
      await next();
    } catch (err) {
      // The API's status and code for the error (src/error-status.ts), on a page.
      const shown = dashboardErrorOf(err);
      if (shown.status === 500) deps.logger.error({ err }, 'dashboard error');
      renderTo(ctx, undefined)(shown.title, '', errorPageBody(shown), shown.status);
    }
  };
}

/** The stylesheet, the script and the icon (cached: the only answer that is not no-store). */
function assetRoutes(router: Router): void {
  router.get(FAVICON_PATH, (ctx) => {
    ctx.set('Cache-Control', FAVICON_CACHE);
    ctx.type = 'image/x-icon';
    ctx.body = FAVICON;
  });
  router.get(STYLESHEET_PATH, (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = STYLESHEET;
  });
  router.get(SCRIPT_PATH, (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = SCRIPT;
  });
}

/** The session cookie: signed, holding the key's id; who it signs in. */
class Sessions {
  readonly signer: SessionSigner;
  private readonly secure: boolean;

  constructor(
    readonly deps: DashboardDeps,
    options: DashboardOptions,
  ) {
    const box = new SecretBox(deps.config);
    this.signer = new SessionSigner(() => options.secret ?? box.currentKey().key);
    this.secure = deps.config.BASE_URL.startsWith('https:');
  }

  setCookie(ctx: Koa.Context, value: string, maxAgeS: number): void {
    ctx.append(
      'Set-Cookie',
      `${SESSION_COOKIE}=${value}; Path=/dashboard; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${this.secure ? '; Secure' : ''}`,
    );
  }

  cookieOf(ctx: Koa.Context): string | undefined {
    const header = ctx.get('cookie');
    for (const part of header.split(';')) {
      const [name, ...rest] = part.trim().split('=');
      if (name === SESSION_COOKIE) return rest.join('=');
    }
    return undefined;
  }

  /** The signed-in viewer, or undefined (expired, forged, or the key revoked). */
  async viewerOf(ctx: Koa.Context) {
    const { deps } = this;
    const cookie = this.cookieOf(ctx);
    const session = this.signer.verify(cookie, deps.now().getTime());
    if (!session || !cookie) return undefined;
    const key = await findApiKey(deps.db, session.keyId);
    if (!key || key.revoked_at || key.environment !== deps.config.ENVIRONMENT) return undefined;
    const viewer: Viewer = {
      keyId: key.id,
      level: key.level,
      name: key.name,
      csrf: this.signer.csrfToken(cookie),
    };
    return { viewer, key, cookie };
  }

  toSignIn(ctx: Koa.Context, hadCookie: boolean): void {
    if (hadCookie) this.setCookie(ctx, '', 0);
    ctx.status = 303;
    ctx.redirect('/dashboard/sign-in');
  }
}

const signInForm = (error?: string) =>
  markup`<div class="box">
      <p>
        Sign in with an API key (the admin key <code>make run</code> printed, or any key: the
        dashboard shows and allows what its level allows).
      </p>
      ${error ? markup`<div class="error" role="alert">${error}</div>` : ''}
      <form method="post" action="/dashboard/sign-in">
        <label for="f-key">API key</label>
        <input id="f-key" name="key" type="password" autocomplete="off" required />
        <button type="submit">Sign in</button>
      </form>
    </div>`;

/** Sign-in (with its limit on failures per address) and sign-out. */
function signInRoutes(
  router: Router,
  deps: DashboardDeps,
  sessions: Sessions,
  limiter: SignInLimiter,
  renderTo: (ctx: Koa.Context, viewer: Viewer | undefined) => Render,
): void {
  router.get('/dashboard/sign-in', (ctx) => {
    renderTo(ctx, undefined)('Sign in', '', signInForm());
  });
  router.post('/dashboard/sign-in', async (ctx) => {
    const now = deps.now().getTime();
    const ip = ctx.ip || 'unknown';
    const wait = limiter.retryAfter(ip, now);
    if (wait > 0) {
      ctx.set('Retry-After', String(wait));
      renderTo(ctx, undefined)(
        'Sign in',
        '',
        signInForm(`Too many failed sign-ins from this address. Try again in ${wait} seconds.`),
        429,
      );
      return;
    }
    const secret = String(formOf(ctx).key ?? '').trim();
    let key: ApiKeyRow;
    try {
      key = await deps.keyCache.authenticate(deps.db, secret, deps.config.ENVIRONMENT);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      limiter.fail(ip, now);
      renderTo(ctx, undefined)('Sign in', '', signInForm(err.message), 401);
      return;
    }
    sessions.setCookie(
      ctx,
      sessions.signer.sign({ keyId: key.id, expires: now + SESSION_TTL_MS }),
      SESSION_TTL_MS / 1000,
    );
    ctx.status = 303;
    ctx.redirect('/dashboard');
  });
  router.post('/dashboard/sign-out', async (ctx) => {
    const who = await sessions.viewerOf(ctx);
    if (who && !sessions.signer.checkCsrf(who.cookie, formOf(ctx).csrf)) {
      return forbiddenCsrf(renderTo(ctx, undefined));
    }
    sessions.toSignIn(ctx, true);
  });
}

/** A page behind the session: signed in, the form's CSRF token checked, the key's level. */
function pageHandler(
  route: DashRoute,
  sessions: Sessions,
  renderTo: (ctx: Koa.Context, viewer: Viewer | undefined) => Render,
  options: DashboardOptions,
): (ctx: Koa.Context) => Promise<void> {
  return async (ctx) => {
    const who = await sessions.viewerOf(ctx);
    if (!who) return sessions.toSignIn(ctx, sessions.cookieOf(ctx) !== undefined);
    const form = formOf(ctx);
    if (route.method === 'post' && !sessions.signer.checkCsrf(who.cookie, form.csrf)) {
      return forbiddenCsrf(renderTo(ctx, undefined));
    }
    const render = renderTo(ctx, who.viewer);
    if (Object.values(ctx.params).some((v) => typeof v === 'string' && !isAcceptableText(v))) {
      render('Not found', '', markup`<p>There is no such page.</p>`, 404);
      return;
    }
    if (!LEVELS[route.permission]!.includes(who.viewer.level)) {
      render(
        'Not allowed',
        '',
        markup`<div class="error" role="alert">
            This ${who.viewer.level} key cannot do this; it needs
            ${LEVELS[route.permission]!.join(' or ')}.
          </div>`,
        403,
      );
      return;
    }
    await route.handler(ctx, {
      deps: sessions.deps,
      viewer: who.viewer,
      key: who.key,
      form,
      fmt: new Formatter(localeOf(ctx.get('accept-language')), sessions.deps.now),
      render,
      publish: options.publish ?? (() => undefined),
    });
  };
}

function forbiddenCsrf(render: Render): void {
  render(
    'Form expired',
    '',
    markup`<div class="error" role="alert">The form was missing its security token or it did not match this session. Nothing was changed. Go back, reload the page and try again.</div>`,
    403,
  );
}

function formOf(ctx: Koa.Context): Record<string, string> {
  const body = (ctx.request as { body?: unknown }).body;
  const out: Record<string, string> = {};
  if (body && typeof body === 'object') {
    for (const [k, v] of Object.entries(body)) {
      if (typeof v === 'string') out[k] = v;
      else if (Array.isArray(v) && typeof v[0] === 'string') out[k] = v[0];
    }
  }
  return out;
}
