import type Koa from 'koa';
import { z } from 'zod';
import { FEED_CONTENT_TYPES, feedDiagnosticsPath, feedFilePath } from '../../domain/feeds/files.js';
import { Feed, FeedCreate, FeedList, FeedPreview, FeedUpdate } from '../../domain/feeds/schemas.js';
import { previewFeed, storeChannelSettingsOf } from '../../domain/feeds/preview.js';
import { listDeliveries, releaseDelivery } from '../../domain/feeds/deliveries.js';
import { receiveStripeEvent } from '../../domain/feeds/stripe-events.js';
import { AppError } from '../../errors.js';
import { readRawBody } from '../body.js';
import { FeedDeliveryList, FeedDeliveryRecord } from '../../domain/feeds/delivery-schemas.js';
import { FeedDeliveryListQuery } from '../schemas/feeds.js';
import {
  createFeed,
  deleteFeed,
  feedNotReady,
  feedOptionsOf,
  findPublishedFeed,
  getFeed,
  listFeeds,
  updateFeed,
} from '../../domain/feeds/feeds.js';
import {
  attachmentDisposition,
  servePublishedFile,
  type PublishedFileOptions,
} from '../file-response.js';
import { defineRoute, type RouteDeps, type Reply } from '../route.js';
import { FeedListQueryString } from '../schemas/feeds.js';
import { ErrorBody, ErrorResponses } from './shared.js';

const IdParams = z.object({ id: z.string().min(1).max(200) });

/** A file of a published feed (404 inactive, 409 until its first generation is on disk). */
async function serveFeedFile(
  ctx: Koa.Context,
  deps: RouteDeps,
  id: string,
  fileOf: (feed: Awaited<ReturnType<typeof findPublishedFeed>>) => PublishedFileOptions,
): Promise<Reply> {
  const feed = await findPublishedFeed(deps.db, id, deps.now());
  const reply = await servePublishedFile(ctx, fileOf(feed));
  if (!reply) throw feedNotReady(feed, deps.now());
  return reply;
}

/**
 * Records the export as an analytics interaction (source `export`) once its answer is sent,
 * whatever it was (200, 304, 404, 409): the batch queue writes it, serving never waits.
 */
function recordExport(ctx: Koa.Context, deps: RouteDeps): void {
  const log = deps.accessLog;
  if (!log) return;
  const at = deps.now();
  const { req, res } = ctx;
  res.once('close', () => {
    const length = Number(res.getHeader('content-length') ?? 0);
    const signature = req.headers['signature-agent'];
    log.record({
      at,
      method: req.method ?? 'GET',
      path: ctx.path,
      status: res.statusCode,
      bytes: req.method === 'HEAD' || !Number.isFinite(length) ? 0 : length,
      userAgent: req.headers['user-agent'] ?? null,
      signatureAgent: typeof signature === 'string' ? signature : null,
      dedupeKey: null,
      source: 'export',
    });
  });
}

const feedOptions = (deps: RouteDeps) => feedOptionsOf(deps.config);

const DeliveryParams = z.object({
  id: z.string().min(1).max(200),
  did: z.string().min(1).max(200),
});

export const feedRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/feeds',
    operationId: 'listFeeds',
    summary: 'List feeds, oldest first, filtered by format and status',
    tag: 'Feeds',
    permission: 'read',
    query: FeedListQueryString,
    responses: { 200: { description: 'A page of feeds', schema: FeedList }, ...ErrorResponses },
    handler: async ({ query }, { db, config }) => {
      const { limit, offset, ...filter } = query;
      return { body: await listFeeds(db, filter, { limit, offset }, config.BASE_URL) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/feeds',
    operationId: 'createFeed',
    summary:
      'Create a feed: status processing with an estimated_completion; the pipeline publishes it',
    tag: 'Feeds',
    permission: 'write',
    body: FeedCreate,
    idempotent: true,
    responses: { 201: { description: 'The new feed', schema: Feed }, ...ErrorResponses },
    handler: async ({ body }, deps) => {
      const feed = await createFeed(deps.db, body, feedOptions(deps), deps.now());
      return { status: 201, body: feed, headers: { Location: `/v1/feeds/${feed.id}` } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/feeds/:id',
    operationId: 'getFeed',
    summary: "Get a feed with its last run's diagnostics and last_error",
    tag: 'Feeds',
    permission: 'read',
    params: IdParams,
    responses: { 200: { description: 'The feed', schema: Feed }, ...ErrorResponses },
    handler: async ({ params }, { db, config }) => ({
      body: await getFeed(db, params.id, config.BASE_URL),
    }),
  }),
  defineRoute({
    method: 'put',
    path: '/v1/feeds/:id',
    operationId: 'updateFeed',
    summary:
      'Change a feed: a new definition regenerates it (processing), status inactive unpublishes it, active republishes it; records feed.updated',
    tag: 'Feeds',
    permission: 'write',
    params: IdParams,
    body: FeedUpdate,
    responses: { 200: { description: 'The updated feed', schema: Feed }, ...ErrorResponses },
    handler: async ({ params, body }, deps) => {
      const feed = await updateFeed(deps.db, params.id, body, feedOptions(deps), deps.now());
      return { body: feed };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/feeds/:id',
    operationId: 'deleteFeed',
    summary: 'Delete a feed; its files are removed by the next pipeline run',
    tag: 'Feeds',
    permission: 'write',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, ...ErrorResponses },
    handler: async ({ params }, deps) => {
      await deleteFeed(deps.db, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/feeds/:id/export',
    operationId: 'exportFeed',
    summary:
      'The published feed file (application/json, text/csv or application/xml) with ETag, If-None-Match and gzip; 409 with Retry-After before the first generation, 404 while inactive',
    tag: 'Feeds',
    permission: 'read',
    params: IdParams,
    responses: {
      200: { description: 'The feed file, streamed', contentType: 'application/octet-stream' },
      304: { description: 'Not modified (If-None-Match or If-Modified-Since)' },
      ...ErrorResponses,
    },
    handler: async ({ params, ctx }, deps) => {
      recordExport(ctx, deps);
      return serveFeedFile(ctx, deps, params.id, (feed) => {
        const path = feedFilePath(deps.config.DATA_DIR, feed.id, feed.published_format);
        // A gzipped feed is its .gz file itself, as the platform fetches it.
        return feed.compression === 'gzip'
          ? {
              path: `${path}.gz`,
              contentType: 'application/gzip',
              disposition: attachmentDisposition(feed.name, `${feed.published_format}.gz`, feed.id),
              gzip: false,
            }
          : {
              path,
              contentType: FEED_CONTENT_TYPES[feed.published_format],
              disposition: attachmentDisposition(feed.name, feed.published_format, feed.id),
            };
      });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/feeds/:id/deliveries',
    operationId: 'listFeedDeliveries',
    summary:
      "A feed's deliveries, newest first: status (pending, delivering, delivered, skipped, held, failed), products, bytes, sha256, attempts, and what the remote answered",
    tag: 'Feeds',
    permission: 'read',
    params: IdParams,
    query: FeedDeliveryListQuery,
    responses: {
      200: { description: 'A page of deliveries', schema: FeedDeliveryList },
      ...ErrorResponses,
    },
    handler: async ({ params, query }, { db }) => ({
      body: await listDeliveries(db, params.id, query),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/feeds/:id/deliveries/:did/release',
    operationId: 'releaseFeedDelivery',
    summary: 'Release a held delivery: it is sent as it is (409 when it is not held)',
    tag: 'Feeds',
    permission: 'write',
    params: DeliveryParams,
    responses: {
      200: { description: 'The delivery, pending', schema: FeedDeliveryRecord },
      ...ErrorResponses,
    },
    handler: async ({ params }, deps) => ({
      body: await releaseDelivery(deps.db, params.id, params.did),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/feeds/:id/stripe-events',
    operationId: 'receiveFeedStripeEvent',
    summary:
      "Inbound Stripe event about a stripe delivery's import (v2.commerce.product_catalog.imports.*, a thin event): no API key, authenticated by Stripe-Signature (t=<time>,v1=<hex HMAC-SHA256 of t.body with the feed's credentials.webhook_secret>, within 5 minutes); the import is read from Stripe and kept in its delivery's remote",
    tag: 'Feeds',
    permission: 'public',
    params: IdParams,
    responses: {
      200: {
        description:
          'Recorded in the delivery that made the import, or ignored (another event type, or an import no recent delivery of the feed made)',
        schema: z.object({
          status: z.enum(['recorded', 'ignored']),
          type: z.string().nullable(),
          import_id: z.string().nullable(),
          delivery_id: z.string().nullable(),
        }),
      },
      400: { description: 'The body is not JSON', schema: ErrorBody },
      401: {
        description: 'Unsigned, the signature does not match, or it is too old',
        schema: ErrorBody,
      },
      404: { description: 'No such feed, or it has no stripe delivery', schema: ErrorBody },
      413: { description: 'Body over 1 MiB', schema: ErrorBody },
    },
    handler: async ({ params, ctx }, deps) => {
      if (!deps.deliveries) {
        throw new AppError('unavailable', 'Feed deliveries are not running in this process.', {
          field: 'deliveries',
          reason: 'not running',
        });
      }
      const body = await readRawBody(ctx, 1024 * 1024, "Stripe's event");
      return {
        body: await receiveStripeEvent(
          deps.deliveries,
          params.id,
          ctx.get('stripe-signature') || undefined,
          body,
        ),
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/feeds/:id/preview',
    operationId: 'previewFeed',
    summary:
      "What the feed's next generation would contain, through its profile's mapping and validation, writing and sending nothing: products included, excluded by reason (up to 20 ids each), issues by field and problem",
    tag: 'Feeds',
    permission: 'read',
    params: IdParams,
    responses: { 200: { description: 'The preview', schema: FeedPreview }, ...ErrorResponses },
    handler: async ({ params }, deps) => ({
      body: await previewFeed(
        deps.db,
        deps.openReader,
        params.id,
        storeChannelSettingsOf(deps.config),
      ),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/feeds/:id/diagnostics',
    operationId: 'getFeedDiagnostics',
    summary:
      'The last run\'s per-product diagnostics: one JSON line per product with issues ({"id", "issues": [{field, problem, severity, message}]})',
    tag: 'Feeds',
    permission: 'read',
    params: IdParams,
    responses: {
      200: { description: 'NDJSON, streamed', contentType: 'application/x-ndjson' },
      304: { description: 'Not modified' },
      ...ErrorResponses,
    },
    handler: async ({ params, ctx }, deps) =>
      serveFeedFile(ctx, deps, params.id, (feed) => ({
        path: feedDiagnosticsPath(deps.config.DATA_DIR, feed.id),
        contentType: 'application/x-ndjson; charset=utf-8',
      })),
  }),
];
