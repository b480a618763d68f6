/**
 * The `stripe` delivery (CONTRACT part 10): a `stripe` feed's CSV imported into Stripe's
 * product catalog with the Product Catalog Import API v2 (docs.stripe.com/api/v2/commerce/
 * product-catalog-imports, `Stripe-Version: 2026-06-24.dahlia`, the first to take `mode`;
 * read 2026-11-28):
 *
 * 1. `POST /v2/commerce/product_catalog/imports` `{feed_type: "product", mode, metadata}`
 *    answers the import `awaiting_upload`, with a pre-signed upload URL. The request carries an
 *    `Idempotency-Key`, so a retry after a lost answer makes no second import.
 * 2. `PUT` of the file to that URL with `Content-Type: text/csv`, as Stripe's guide shows
 *    (docs.stripe.com/agentic-commerce/for-sellers/custom, "Upload your CSV").
 * 3. `GET /v2/commerce/product_catalog/imports/:id` until the import ends, a while apart:
 *    `succeeded` and `succeeded_with_errors` deliver (the counts and Stripe's sample of the
 *    refused rows kept in the record), `failed` fails the delivery with Stripe's code and
 *    message, and it is retried. An import still processing after FEED_DELIVERY_WAIT_SECONDS
 *    is delivered as `processing` (Stripe has the file); the events Stripe sends bring its
 *    ending to the record (src/domain/feeds/stripe-events.ts, readStripeImport below).
 *
 * Every request goes through the guarded client, as every outbound call does; the secret key
 * goes to the API's origin only (the upload URL is pre-signed and gets no key).
 */
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { DeliveryTransport, RemoteReader } from '../domain/feeds/deliveries.js';
import { createHttpClient, type HttpClient, type HttpResponse } from '../net/http-client.js';

export const STRIPE_VERSION = '2026-06-24.dahlia';
export const IMPORTS_PATH = '/v2/commerce/product_catalog/imports';

/** Waits between status reads (ms), the last repeated until the request's waitMs has passed. */
export const POLL_WAITS_MS = [0, 250, 500, 1000, 2000, 4000, 8000, 15_000, 30_000];

const ENDED = new Set(['succeeded', 'succeeded_with_errors', 'failed']);

/** The parts of a ProductCatalogImport the delivery reads (all counts are strings in v2). */
export interface StripeImport {
  id: string;
  status: string;
  livemode?: boolean;
  mode?: string;
  status_details?: {
    awaiting_upload?: { upload_url?: { url?: string; expires_at?: string } };
    failed?: { code?: string; failure_message?: string; type?: string };
    processing?: { success_count?: string; error_count?: string };
    succeeded?: { success_count?: string };
    succeeded_with_errors?: {
      success_count?: string;
      error_count?: string;
      samples?: { id?: string; row?: string; field?: string; error_message?: string }[];
    };
  } | null;
}

/** Stripe's error answer (`{"error": {"type", "code", "message"}}`) in a line. */
async function refusal(res: HttpResponse, doing: string): Promise<Error> {
  const text = await res.text();
  let detail = text.slice(0, 300);
  try {
    const { error } = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (error?.message) detail = `${error.code ? `${error.code}: ` : ''}${error.message}`;
  } catch {
    // Not JSON: the text as it came.
  }
  return new Error(`Stripe answered ${res.status} ${doing}: ${detail}`);
}

/** What the delivery's record keeps of an import: its state, counts and refused rows. */
export function importSummary(imp: StripeImport): Record<string, unknown> {
  const details = imp.status_details ?? {};
  const counts = details.succeeded_with_errors ?? details.succeeded ?? details.processing ?? {};
  const number = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const errors = details.succeeded_with_errors;
  return {
    import_id: imp.id,
    status: imp.status,
    ...(imp.livemode === undefined ? {} : { livemode: imp.livemode }),
    ...('success_count' in counts ? { success_count: number(counts.success_count) } : {}),
    ...(errors?.error_count === undefined ? {} : { error_count: number(errors.error_count) }),
    ...(errors?.samples ? { error_samples: errors.samples.slice(0, 10) } : {}),
    ...(details.failed ? { failure: details.failed } : {}),
  };
}

/** Reads an import (GET, retried on 5xx and network errors). */
export async function readImport(
  client: HttpClient,
  apiUrl: string,
  token: string,
  id: string,
): Promise<StripeImport> {
  const res = await client.request({
    url: `${apiUrl.replace(/\/+$/, '')}${IMPORTS_PATH}/${encodeURIComponent(id)}`,
    headers: { authorization: `Bearer ${token}`, 'stripe-version': STRIPE_VERSION },
  });
  if (res.status !== 200) throw await refusal(res, `reading import ${id}`);
  return (await res.json()) as StripeImport;
}

export const sendToStripe: DeliveryTransport = async (request) => {
  const { delivery, credentials } = request;
  if (delivery.type !== 'stripe') throw new Error('not a stripe delivery');
  const token = credentials.api_key;
  if (!token) throw new Error('the stripe delivery has no api_key');
  const client = createHttpClient({ allowPrivate: request.allowPrivate, timeoutMs: 60_000 });
  const api = delivery.api_url.replace(/\/+$/, '');
  const created = await client.request({
    method: 'POST',
    url: `${api}${IMPORTS_PATH}`,
    headers: {
      authorization: `Bearer ${token}`,
      'stripe-version': STRIPE_VERSION,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify({
      feed_type: 'product',
      mode: delivery.mode,
      metadata: { file_name: 'agentshelf-products.csv', source: 'agentshelf' },
    }),
    retry: true,
  });
  if (created.status !== 200) throw await refusal(created, 'creating the import');
  let imp = (await created.json()) as StripeImport;
  const upload = imp.status_details?.awaiting_upload?.upload_url?.url;
  if (imp.status !== 'awaiting_upload' || !upload) {
    throw new Error(`Stripe's import ${imp.id} is ${imp.status}, with no upload URL`);
  }
  const put = await client.request({
    method: 'PUT',
    url: upload,
    headers: { 'content-type': 'text/csv' },
    body: { length: request.bytes, open: () => fs.createReadStream(request.file) },
    retry: true,
  });
  if (put.status < 200 || put.status > 299) throw await refusal(put, 'to the file upload');
  put.discard();
  request.onProgress?.(request.bytes, request.bytes);
  const started = Date.now();
  for (let i = 0; !ENDED.has(imp.status); i++) {
    const wait = POLL_WAITS_MS[Math.min(i, POLL_WAITS_MS.length - 1)]!;
    if (Date.now() - started + wait > request.waitMs) break;
    if (wait > 0) await delay(wait);
    imp = await readImport(client, api, token, imp.id);
  }
  if (imp.status === 'failed') {
    const failed = imp.status_details?.failed;
    throw new Error(
      `Stripe's import ${imp.id} failed: ${failed?.code ?? 'unknown'}: ${failed?.failure_message ?? 'no message'}`,
    );
  }
  return {
    api_url: delivery.api_url,
    mode: delivery.mode,
    bytes: request.bytes,
    ...importSummary(imp),
  };
};

/** A stripe delivery's import read again (the events Stripe sends say it changed). */
export const readStripeImport: RemoteReader = async ({
  delivery,
  credentials,
  remote,
  allowPrivate,
}) => {
  if (delivery.type !== 'stripe') throw new Error('not a stripe delivery');
  if (typeof remote.import_id !== 'string' || !credentials.api_key) return remote;
  const client = createHttpClient({ allowPrivate, timeoutMs: 30_000 });
  const imp = await readImport(client, delivery.api_url, credentials.api_key, remote.import_id);
  return { ...remote, ...importSummary(imp) };
};
