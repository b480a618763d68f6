import { z } from 'zod';
import {
  ApiKey,
  ApiKeyCreate,
  createApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../domain/access/api-keys.js';
import { defineRoute } from '../route.js';
import { ErrorResponses } from './shared.js';

const CreatedKey = ApiKey.extend({
  key: z.string().meta({ description: 'The key itself, shown this once' }),
});

export const apiKeyRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/api-keys',
    operationId: 'createApiKey',
    summary: 'Create an API key; the response carries the key, shown this once',
    tag: 'API keys',
    permission: 'admin',
    body: ApiKeyCreate,
    idempotent: true,
    responses: { 201: { description: 'The new key', schema: CreatedKey }, ...ErrorResponses },
    handler: async ({ body }, { db, config, now }) => {
      const { key, secret } = await createApiKey(db, body, {
        environment: config.ENVIRONMENT,
        defaultPlan: config.DEFAULT_PLAN,
        now: now(),
      });
      return { status: 201, body: { ...key, key: secret } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/api-keys',
    operationId: 'listApiKeys',
    summary: 'List API keys (never the keys themselves)',
    tag: 'API keys',
    permission: 'admin',
    responses: {
      200: { description: 'The keys', schema: z.object({ api_keys: z.array(ApiKey) }) },
      ...ErrorResponses,
    },
    handler: async (_input, { db }) => ({ body: { api_keys: await listApiKeys(db) } }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/api-keys/:id',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key; the next request with it is refused',
    tag: 'API keys',
    permission: 'admin',
    params: z.object({ id: z.string().min(1).max(200) }),
    responses: { 200: { description: 'The revoked key', schema: ApiKey }, ...ErrorResponses },
    handler: async ({ params }, { db, now, keyCache }) => {
      const key = await revokeApiKey(db, params.id, now());
      keyCache.invalidate();
      return { body: key };
    },
  }),
];
