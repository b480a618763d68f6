import type { ApiDeps } from './http/route.js';
import type { DashboardDeps } from './dashboard/route.js';

/**
 * The one object of shared parts the composition root (server.ts) builds: the API's routes
 * and middleware take it as ApiDeps, the dashboard as DashboardDeps. A part only one of them
 * uses is declared there, not here.
 */
export type AppDeps = ApiDeps & DashboardDeps;
