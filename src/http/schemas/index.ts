/**
 * The HTTP layer's view of the domain's schemas: query strings read as text, and the
 * OpenAPI descriptions and component names (`apiDocs`). Importing this module registers
 * every description.
 */
export * from './access.js';
export * from './audit.js';
export * from './feeds.js';
export * from './products.js';
export * from './registry.js';
export * from './shared.js';
export * from './webhooks.js';
export * from './analytics.js';
export * from './reports.js';
export * from './integrations.js';
export * from './publications.js';
