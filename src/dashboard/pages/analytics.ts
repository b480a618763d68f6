import type { DashRoute } from '../app.js';

export const analyticsPages: DashRoute[] = [];
