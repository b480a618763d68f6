import { z } from 'zod';
import { AppError } from '../../errors.js';
import {
  createIntegration,
  deleteIntegration,
  getIntegration,
  listIntegrations,
  syncHistory,
  syncStatus,
  testIntegration,
  updateIntegration,
} from '../../domain/integrations/integrations.js';
import { receiveWebhook } from '../../domain/integrations/inbound.js';
import {
  Integration,
  IntegrationCreate,
  IntegrationList,
  IntegrationTestResult,
  IntegrationUpdate,
  SyncHistory,
  SyncRequest,
  SyncRun,
  SyncStatus,
} from '../../domain/integrations/schemas.js';
import type { SyncRunner } from '../../domain/integrations/sync.js';
import { readRawBody } from '../body.js';
import { defineRoute, type RouteDeps } from '../route.js';
import { IntegrationListQueryString, SyncHistoryQueryString } from '../schemas/integrations.js';
import { ErrorBody, ErrorResponses } from './shared.js';

const IdParams = z.object({ id: z.string().min(1).max(200) });

/** Inbound webhook bodies are read raw (the signature covers the bytes), up to 1 MiB. */
const MAX_WEBHOOK_BYTES = 1024 * 1024;

function runnerOf(deps: RouteDeps): SyncRunner {
  if (!deps.integrations) {
    throw new AppError('unavailable', 'Integrations are not running in this process.', {
      retryAfter: 5,
    });
  }
  return deps.integrations;
}

export const integrationRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/integrations',
    operationId: 'listIntegrations',
    summary: 'List connected platforms and feeds, oldest first (never their credentials)',
    tag: 'Integrations',
    permission: 'read',
    query: IntegrationListQueryString,
    responses: {
      200: { description: 'A page of integrations', schema: IntegrationList },
      ...ErrorResponses,
    },
    handler: async ({ query }, { db }) => ({ body: await listIntegrations(db, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/integrations',
    operationId: 'createIntegration',
    summary:
      'Connect a Shopify store, a WooCommerce store or a feed URL; credentials are encrypted and never returned',
    tag: 'Integrations',
    permission: 'write',
    body: IntegrationCreate,
    idempotent: true,
    responses: { 201: { description: 'The integration', schema: Integration }, ...ErrorResponses },
    handler: async ({ body }, deps) => {
      const integration = await createIntegration(runnerOf(deps).env, deps.db, body);
      return {
        status: 201,
        body: integration,
        headers: { Location: `/v1/integrations/${integration.id}` },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/integrations/:id',
    operationId: 'getIntegration',
    summary: 'Get one integration: status, last sync, last error, product count',
    tag: 'Integrations',
    permission: 'read',
    params: IdParams,
    responses: { 200: { description: 'The integration', schema: Integration }, ...ErrorResponses },
    handler: async ({ params }, { db }) => ({ body: await getIntegration(db, params.id) }),
  }),
  defineRoute({
    method: 'put',
    path: '/v1/integrations/:id',
    operationId: 'updateIntegration',
    summary: 'Change the shop domain, settings, credentials or status (pause / resume)',
    tag: 'Integrations',
    permission: 'write',
    params: IdParams,
    body: IntegrationUpdate,
    responses: { 200: { description: 'The integration', schema: Integration }, ...ErrorResponses },
    handler: async ({ params, body }, deps) => ({
      body: await updateIntegration(runnerOf(deps).env, deps.db, params.id, body),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/integrations/:id',
    operationId: 'deleteIntegration',
    summary:
      'Disconnect and forget an integration and its sync history; its products stay (409 while a sync runs)',
    tag: 'Integrations',
    permission: 'write',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, ...ErrorResponses },
    handler: async ({ params }, deps) => {
      await deleteIntegration(runnerOf(deps).env, deps.db, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/integrations/:id/test',
    operationId: 'testIntegration',
    summary:
      'Connect to the platform and read the least that proves the settings work; 200 with success or failure',
    tag: 'Integrations',
    permission: 'write',
    params: IdParams,
    responses: {
      200: { description: 'The outcome', schema: IntegrationTestResult },
      ...ErrorResponses,
    },
    handler: async ({ params }, deps) => ({
      body: await testIntegration(runnerOf(deps).env, deps.db, params.id),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/integrations/:id/sync',
    operationId: 'syncIntegration',
    summary:
      'Start a sync now; 202 with the run, 409 while one runs. {"force": true} applies a run the hold checks would hold',
    tag: 'Integrations',
    permission: 'write',
    params: IdParams,
    body: SyncRequest,
    responses: { 202: { description: 'The run, started', schema: SyncRun }, ...ErrorResponses },
    handler: async ({ params, body }, deps) => {
      const { run } = await runnerOf(deps).start(params.id, {
        trigger: 'api',
        ...(body.force ? { force: true } : {}),
      });
      return {
        status: 202,
        body: run,
        headers: { Location: `/v1/integrations/${params.id}/sync/status` },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/integrations/:id/sync/status',
    operationId: 'getIntegrationSyncStatus',
    summary: 'The run under way, if any, and the last finished run',
    tag: 'Integrations',
    permission: 'read',
    params: IdParams,
    responses: { 200: { description: 'Sync status', schema: SyncStatus }, ...ErrorResponses },
    handler: async ({ params }, { db }) => ({ body: await syncStatus(db, params.id) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/integrations/:id/sync/history',
    operationId: 'listIntegrationSyncHistory',
    summary: 'Sync runs, newest first, with their counts and item errors',
    tag: 'Integrations',
    permission: 'read',
    params: IdParams,
    query: SyncHistoryQueryString,
    responses: { 200: { description: 'A page of runs', schema: SyncHistory }, ...ErrorResponses },
    handler: async ({ params, query }, { db }) => ({
      body: await syncHistory(db, params.id, query),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/integrations/:id/webhook',
    operationId: 'receiveIntegrationWebhook',
    summary:
      'Inbound platform webhook (Shopify products/create|update|delete, WooCommerce product.created|updated|deleted); no API key: authenticated by X-Shopify-Hmac-Sha256 or X-WC-Webhook-Signature (base64 HMAC-SHA256 of the raw body with the webhook secret)',
    tag: 'Integrations',
    permission: 'public',
    params: IdParams,
    responses: {
      200: {
        description:
          "Applied, ignored (a topic without product changes, or WooCommerce's unsigned `webhook_id=N` ping of a new webhook's URL) or a duplicate delivery",
        schema: z.object({
          status: z.enum(['applied', 'duplicate', 'ignored']),
          topic: z.string().nullable(),
          created: z.int(),
          updated: z.int(),
          unchanged: z.int(),
          deactivated: z.int(),
          failed: z.int(),
        }),
      },
      400: { description: 'The body is not JSON', schema: ErrorBody },
      401: { description: 'Unsigned, or the signature does not match', schema: ErrorBody },
      404: { description: 'No such integration', schema: ErrorBody },
      413: { description: 'Body over 1 MiB', schema: ErrorBody },
    },
    handler: async ({ params, ctx }, deps) => {
      const header = (name: string) => ctx.get(name) || undefined;
      const body = await readRawBody(ctx, MAX_WEBHOOK_BYTES, 'The webhook body');
      const result = await receiveWebhook(
        runnerOf(deps).env,
        params.id,
        {
          shopifyHmac: header('x-shopify-hmac-sha256'),
          wcSignature: header('x-wc-webhook-signature'),
          shopifyTopic: header('x-shopify-topic'),
          wcTopic: header('x-wc-webhook-topic'),
          shopifyWebhookId: header('x-shopify-webhook-id') ?? header('x-shopify-event-id'),
          wcWebhookId: header('x-wc-webhook-id'),
          wcDeliveryId: header('x-wc-webhook-delivery-id'),
          contentType: header('content-type'),
        },
        body,
      );
      return { body: result };
    },
  }),
];
