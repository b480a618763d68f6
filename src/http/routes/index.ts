import type { RouteDef } from '../route.js';
import { analyticsRoutes } from './analytics.js';
import { apiKeyRoutes } from './api-keys.js';
import { auditLogRoutes } from './audit-log.js';
import { feedRoutes } from './feeds.js';
import { integrationRoutes } from './integrations.js';
import { metaRoutes } from './meta.js';
import { productRoutes } from './products.js';
import { publicationRoutes } from './publications.js';
import { reportRoutes } from './reports.js';
import { webhookRoutes } from './webhooks.js';

/** Every platform API route, in the order the OpenAPI document lists them. */
export const allRoutes: RouteDef[] = [
  ...productRoutes,
  ...webhookRoutes,
  ...feedRoutes,
  ...apiKeyRoutes,
  ...auditLogRoutes,
  ...analyticsRoutes,
  ...reportRoutes,
  ...integrationRoutes,
  ...publicationRoutes,
  ...metaRoutes(() => allRoutes),
];
