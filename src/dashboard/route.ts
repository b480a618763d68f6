import type Koa from 'koa';
import type { RouteDeps } from '../http/route.js';
import type { ApiKeyRow } from '../db/schema.js';
import type { Html } from '../markup.js';
import type { Viewer } from './layout.js';
import type { Formatter } from './format.js';

/**
 * What the dashboard's pages use: what the API's routes use (they call the same domain
 * functions), without the feed export's request log.
 */
export type DashboardDeps = Omit<RouteDeps, 'accessLog'>;

/** What a dashboard page handler gets. */
export interface DashContext {
  deps: DashboardDeps;
  viewer: Viewer;
  key: ApiKeyRow;
  /** Asks the pipeline for a run (publish now), as a change of products would. */
  publish(trigger: string): void;
  /** Money, numbers and times in the viewer's language (Accept-Language). */
  fmt: Formatter;
  /** The posted form's fields (strings only). */
  form: Record<string, string>;
  render(
    title: string,
    current: string,
    body: Html | Html[],
    status?: number,
    refreshSeconds?: number,
  ): void;
}

export type DashHandler = (ctx: Koa.Context, dash: DashContext) => Promise<void>;

export interface DashRoute {
  method: 'get' | 'post';
  path: string;
  /** Who may: read (every key), write (read_write, admin), admin. */
  permission: 'read' | 'write' | 'admin';
  handler: DashHandler;
}

export function canWrite(viewer: Viewer): boolean {
  return viewer.level !== 'read_only';
}

/**
 * GET query parameters as strings (first value of repeated ones), empty ones left out; with
 * `only`, just those (a list section of a page that other parameters address too).
 */
export function queryOf(ctx: Koa.Context, only?: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(ctx.query)) {
    if (only && !only.includes(k)) continue;
    const value = Array.isArray(v) ? v[0] : v;
    if (typeof value === 'string' && value !== '') out[k] = value;
  }
  return out;
}
