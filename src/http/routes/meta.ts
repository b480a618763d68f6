import { z } from 'zod';
import { pingStore } from '../../db/queries/health.js';
import { defineRoute, type RouteDef } from '../route.js';
import { buildOpenApiDocument } from '../openapi.js';

/**
 * The document and health routes. The document lists every route, this one included, so the
 * caller passes the whole list in (the routes do not import their own index).
 */
export const metaRoutes = (listRoutes: () => readonly RouteDef[]) => [
  defineRoute({
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    tag: 'Meta',
    permission: 'public',
    responses: { 200: { description: 'The OpenAPI document' } },
    handler: async (_input, { config }) => ({
      body: buildOpenApiDocument(listRoutes(), config.BASE_URL),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/healthz',
    operationId: 'getHealth',
    summary: 'Liveness and store check',
    tag: 'Meta',
    permission: 'public',
    responses: { 200: { description: 'Healthy', schema: z.object({ status: z.literal('ok') }) } },
    handler: async (_input, { db }) => {
      await pingStore(db);
      return { body: { status: 'ok' } };
    },
  }),
];
