import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { storedTimestamp } from '../../db/timestamps.js';
import {
  countLiveMappings,
  insertWebhookReceipt,
  pruneWebhookReceipts,
  updateIntegrationRow,
} from '../../db/queries/integrations.js';
import { withTransaction } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { applyWebhookChange, newCounts } from './apply.js';
import { findIntegration } from './present.js';
import { credentialsOf, openSourceContext, sourceOf, type IntegrationEnv } from './runtime.js';

/**
 * Inbound platform webhooks (`POST /v1/integrations/:id/webhook`). The platform's signature is
 * the only authentication: a base64 HMAC-SHA256 of the raw body with the integration's webhook
 * secret, in `X-Shopify-Hmac-Sha256` (Shopify) or `X-WC-Webhook-Signature` (WooCommerce),
 * compared in constant time. A delivery id seen before (`X-Shopify-Webhook-Id`, or
 * `X-WC-Webhook-ID` with `X-WC-Webhook-Delivery-ID`; the body's hash when there is none)
 * changes nothing.
 */

/** Receipts are kept this long; platforms retry a delivery for up to 48 hours. */
const RECEIPT_DAYS = 30;

export interface InboundHeaders {
  shopifyHmac?: string | undefined;
  wcSignature?: string | undefined;
  shopifyTopic?: string | undefined;
  wcTopic?: string | undefined;
  shopifyWebhookId?: string | undefined;
  wcWebhookId?: string | undefined;
  wcDeliveryId?: string | undefined;
  contentType?: string | undefined;
}

export interface InboundResult {
  status: 'applied' | 'duplicate' | 'ignored';
  topic: string | null;
  created: number;
  updated: number;
  unchanged: number;
  deactivated: number;
  failed: number;
}

function unauthorized(message: string): AppError {
  return new AppError('invalid_api_key', message, {
    field: 'X-Shopify-Hmac-Sha256',
    reason: 'missing or wrong signature',
  });
}

/**
 * WooCommerce's check of a new webhook's URL (WC_Webhook::deliver_ping): an unsigned POST of
 * the form body `webhook_id=N` (application/x-www-form-urlencoded), without any
 * X-WC-Webhook-* header; WooCommerce refuses to save the webhook unless it is answered
 * exactly 200. Only exactly that is taken for a ping.
 */
export function isWooCommercePing(headers: InboundHeaders, body: Buffer): boolean {
  if (headers.shopifyHmac !== undefined || headers.wcSignature !== undefined) return false;
  const type = headers.contentType?.split(';')[0]?.trim().toLowerCase();
  // WordPress's HTTP API sends a string body as a form whatever the transport.
  if (type !== 'application/x-www-form-urlencoded') return false;
  return body.length <= 40 && /^webhook_id=\d{1,19}$/.test(body.toString('latin1'));
}

/** Whether `signature` is the base64 HMAC-SHA256 of `body` with `secret` (constant time). */
export function verifySignature(secret: string, body: Buffer, signature: string): boolean {
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(signature.trim(), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function receiveWebhook(
  env: IntegrationEnv,
  integrationId: string,
  headers: InboundHeaders,
  body: Buffer,
): Promise<InboundResult> {
  const row = await findIntegration(env.db, integrationId);
  if (row.platform === 'woocommerce' && isWooCommercePing(headers, body)) {
    // Nothing to verify and nothing to change: the answer only tells WooCommerce the URL works.
    env.logger.info(
      { integration: row.id, webhook_id: body.toString('latin1').slice('webhook_id='.length) },
      'woocommerce webhook ping answered',
    );
    return {
      status: 'ignored',
      topic: null,
      created: 0,
      updated: 0,
      unchanged: 0,
      deactivated: 0,
      failed: 0,
    };
  }
  const signature = headers.shopifyHmac ?? headers.wcSignature;
  if (!signature) {
    throw unauthorized(
      'Unsigned webhook: X-Shopify-Hmac-Sha256 or X-WC-Webhook-Signature is required.',
    );
  }
  let credentials: Record<string, string> | null;
  try {
    credentials = credentialsOf(env, row);
  } catch {
    throw unauthorized('This integration cannot verify webhooks (its credentials do not decrypt).');
  }
  const secret =
    credentials?.webhook_secret ??
    (row.platform === 'shopify' ? credentials?.client_secret : undefined);
  if (!secret) {
    throw unauthorized(
      'This integration has no webhook secret: set credentials.webhook_secret (Shopify: or client_secret).',
    );
  }
  if (!verifySignature(secret, body, signature)) {
    throw unauthorized('The webhook signature does not match the body.');
  }
  const topic = headers.shopifyTopic ?? headers.wcTopic ?? null;
  const deliveryId =
    headers.shopifyWebhookId ??
    (headers.wcWebhookId || headers.wcDeliveryId
      ? `${headers.wcWebhookId ?? ''}:${headers.wcDeliveryId ?? ''}`
      : `sha256:${createHash('sha256').update(body).digest('hex')}`);
  const empty = { topic, created: 0, updated: 0, unchanged: 0, deactivated: 0, failed: 0 };
  const source = sourceOf(env, row.platform);
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('invalid_request', 'The webhook body is not JSON.', {
      field: 'body',
      reason: 'must be JSON',
    });
  }
  const change =
    source.webhook && topic
      ? await source.webhook(
          openSourceContext(env, row, new AbortController().signal).ctx,
          topic,
          payload,
        )
      : undefined;
  const now = env.now();
  const counts = newCounts();
  const fresh = await withTransaction(env.db, async (trx) => {
    await pruneWebhookReceipts(trx, storedTimestamp(now.getTime() - RECEIPT_DAYS * 86_400_000));
    if (!(await insertWebhookReceipt(trx, row.id, deliveryId, storedTimestamp(now)))) return false;
    if (!change) return true;
    await applyWebhookChange(trx, row.id, change, {
      defaultCurrency: env.defaultCurrency,
      now,
      counts,
    });
    await updateIntegrationRow(trx, row.id, {
      product_count: await countLiveMappings(trx, row.id),
    });
    return true;
  });
  if (!fresh) return { status: 'duplicate', ...empty };
  if (!change) return { status: 'ignored', ...empty };
  const { created, updated, unchanged, deactivated, failed } = counts;
  return { status: 'applied', topic, created, updated, unchanged, deactivated, failed };
}
