import { z } from 'zod';
import { AppError } from '../../errors.js';
import type { WebhookWorker } from '../../domain/webhooks/worker.js';
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  getDelivery,
  listDeliveries,
  listWebhooks,
  presentWebhook,
  updateWebhook,
} from '../../domain/webhooks/webhooks.js';
import {
  DeliveryList,
  Webhook,
  WebhookCreate,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookList,
  WebhookUpdate,
  WebhookWithSecret,
} from '../../domain/webhooks/schemas.js';
import { defineRoute, type RouteDeps } from '../route.js';
import { DeliveryListQueryString, WebhookListQueryString } from '../schemas/webhooks.js';
import { ErrorResponses } from './shared.js';

const IdParams = z.object({ id: z.string().min(1).max(200) });
const DeliveryParams = IdParams.extend({ delivery_id: z.string().min(1).max(200) });

function workerOf(deps: RouteDeps): WebhookWorker {
  if (!deps.webhooks) {
    throw new AppError('unavailable', 'Webhook delivery is not running in this process.', {
      retryAfter: 5,
    });
  }
  return deps.webhooks;
}

const policyOf = (deps: RouteDeps) => ({ allowPrivate: deps.config.ALLOW_PRIVATE_TARGETS });

export const webhookRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/webhooks',
    operationId: 'createWebhook',
    summary:
      'Register an endpoint for events recorded from now on; a generated secret is returned this once',
    tag: 'Webhooks',
    permission: 'write',
    body: WebhookCreate,
    idempotent: true,
    responses: {
      201: {
        description: 'The endpoint; `secret` only when it was generated',
        schema: WebhookWithSecret.partial({ secret: true }),
      },
      ...ErrorResponses,
    },
    handler: async ({ body }, deps) => {
      const { webhook, secret } = await createWebhook(deps.db, body, policyOf(deps), deps.now());
      return {
        status: 201,
        body: secret === undefined ? webhook : { ...webhook, secret },
        headers: { Location: `/v1/webhooks/${webhook.id}` },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks',
    operationId: 'listWebhooks',
    summary: 'List endpoints, oldest first (never their secrets)',
    tag: 'Webhooks',
    permission: 'read',
    query: WebhookListQueryString,
    responses: {
      200: { description: 'A page of endpoints', schema: WebhookList },
      ...ErrorResponses,
    },
    handler: async ({ query }, { db }) => ({ body: await listWebhooks(db, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/:id',
    operationId: 'getWebhook',
    summary: 'Get one endpoint, with its status and why it was disabled',
    tag: 'Webhooks',
    permission: 'read',
    params: IdParams,
    responses: { 200: { description: 'The endpoint', schema: Webhook }, ...ErrorResponses },
    handler: async ({ params }, { db }) => ({
      body: presentWebhook(await findWebhook(db, params.id)),
    }),
  }),
  defineRoute({
    method: 'put',
    path: '/v1/webhooks/:id',
    operationId: 'updateWebhook',
    summary:
      'Change url, events or status, or rotate the secret (the old one keeps signing for 24 hours)',
    tag: 'Webhooks',
    permission: 'write',
    params: IdParams,
    body: WebhookUpdate,
    responses: {
      200: {
        description: 'The endpoint; `secret` only after rotate_secret',
        schema: WebhookWithSecret.partial({ secret: true }),
      },
      ...ErrorResponses,
    },
    handler: async ({ params, body }, deps) => {
      const { webhook, secret } = await updateWebhook(
        deps.db,
        params.id,
        body,
        policyOf(deps),
        deps.now(),
      );
      return { body: secret === undefined ? webhook : { ...webhook, secret } };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/webhooks/:id',
    operationId: 'deleteWebhook',
    summary: 'Delete an endpoint and its delivery log',
    tag: 'Webhooks',
    permission: 'write',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, ...ErrorResponses },
    handler: async ({ params }, deps) => {
      await deleteWebhook(deps.db, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/:id/deliveries',
    operationId: 'listWebhookDeliveries',
    summary:
      'The delivery log of an endpoint, newest first: event, attempts, last outcome, next try',
    tag: 'Webhooks',
    permission: 'read',
    params: IdParams,
    query: DeliveryListQueryString,
    responses: {
      200: { description: 'A page of deliveries', schema: DeliveryList },
      ...ErrorResponses,
    },
    handler: async ({ params, query }, { db }) => ({
      body: await listDeliveries(db, params.id, query),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/:id/deliveries/:delivery_id',
    operationId: 'getWebhookDelivery',
    summary: 'One delivery with every attempt: status code, duration, error and the answer',
    tag: 'Webhooks',
    permission: 'read',
    params: DeliveryParams,
    responses: {
      200: { description: 'The delivery', schema: WebhookDeliveryDetail },
      ...ErrorResponses,
    },
    handler: async ({ params }, { db }) => ({
      body: await getDelivery(db, params.id, params.delivery_id),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks/:id/test',
    operationId: 'testWebhook',
    summary:
      'Send a webhook.test event now (whatever the endpoint events and status) and log it; answers with the outcome',
    tag: 'Webhooks',
    permission: 'write',
    params: IdParams,
    responses: {
      201: { description: 'The test delivery, succeeded or failed', schema: WebhookDelivery },
      ...ErrorResponses,
    },
    handler: async ({ params }, deps) => {
      const delivery = await workerOf(deps).sendTest(params.id);
      return {
        status: 201,
        body: delivery,
        headers: { Location: `/v1/webhooks/${params.id}/deliveries/${delivery.id}` },
      };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhooks/:id/deliveries/:delivery_id/retry',
    operationId: 'retryWebhookDelivery',
    summary:
      'Send a delivery again now, outside the queue; a success settles it, a failure leaves its schedule as it was',
    tag: 'Webhooks',
    permission: 'write',
    params: DeliveryParams,
    responses: {
      200: { description: 'The delivery after this attempt', schema: WebhookDelivery },
      ...ErrorResponses,
    },
    handler: async ({ params }, deps) => ({
      body: await workerOf(deps).retryDelivery(params.id, params.delivery_id),
    }),
  }),
];
