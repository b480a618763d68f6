/**
 * The `acp_feed_api` delivery (CONTRACT part 10): an `acp` feed's Products upserted into a
 * feed of a platform that speaks ACP's Feed API (vendor/acp/openapi.feed.yaml, 2026-04-17):
 * `PATCH {url}/feeds/{feed_id}/products` with `{"products": [...]}`, in batches. The API
 * states no batch limit; a batch here is at most BATCH_PRODUCTS products and BATCH_BYTES of
 * body, under the 1 MiB bodies servers commonly cap. The API has no delete: a product gone
 * from the catalogue stays in the remote feed until the platform's own file ingestion
 * replaces the set. Each answer (`{id, accepted}`) is kept; a refused batch fails the
 * delivery with the API's error, and the retry sends every batch again (upserts are safe to
 * repeat). Requests go through the guarded client, as every outbound call does.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import zlib from 'node:zlib';
import type { DeliveryTransport } from '../domain/feeds/deliveries.js';
import { createHttpClient } from '../net/http-client.js';

export const BATCH_PRODUCTS = 100;
export const BATCH_BYTES = 900 * 1024;

/** The feed's Products, a JSON line each (the file is `acp` JSON Lines, maybe gzipped). */
function linesOf(file: string): AsyncIterable<string> {
  const raw = fs.createReadStream(file);
  const input = file.endsWith('.gz') ? raw.pipe(zlib.createGunzip()) : raw;
  return readline.createInterface({ input, crlfDelay: Infinity });
}

export const sendToAcpFeedApi: DeliveryTransport = async (request) => {
  const { delivery, credentials } = request;
  if (delivery.type !== 'acp_feed_api') throw new Error('not an acp_feed_api delivery');
  const client = createHttpClient({ allowPrivate: request.allowPrivate, timeoutMs: 30_000 });
  const url = `${delivery.url.replace(/\/+$/, '')}/feeds/${encodeURIComponent(delivery.feed_id)}/products`;
  const answers: unknown[] = [];
  let batch: string[] = [];
  let batchBytes = 0;
  let products = 0;
  let sent = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const body = `{"products":[${batch.join(',')}]}`;
    const res = await client.request({
      method: 'PATCH',
      url,
      headers: {
        'content-type': 'application/json',
        ...(credentials.token ? { authorization: `Bearer ${credentials.token}` } : {}),
      },
      body,
      retry: true,
    });
    const text = await res.text();
    if (res.status !== 200) {
      throw new Error(
        `the Feed API answered ${res.status} to batch ${answers.length + 1}: ${text.slice(0, 500)}`,
      );
    }
    const answer = JSON.parse(text) as { id?: unknown; accepted?: unknown };
    if (answer.accepted !== true) {
      throw new Error(
        `the Feed API did not accept batch ${answers.length + 1}: ${text.slice(0, 500)}`,
      );
    }
    answers.push(answer);
    products += batch.length;
    sent += Buffer.byteLength(body);
    request.onProgress?.(products, 0);
    batch = [];
    batchBytes = 0;
  };
  for await (const line of linesOf(request.file)) {
    if (line === '') continue;
    const bytes = Buffer.byteLength(line) + 1;
    if (batch.length === BATCH_PRODUCTS || (batch.length > 0 && batchBytes + bytes > BATCH_BYTES)) {
      await flush();
    }
    batch.push(line);
    batchBytes += bytes;
  }
  await flush();
  return {
    url: delivery.url,
    feed_id: delivery.feed_id,
    products,
    batches: answers.length,
    bytes_sent: sent,
    last_answer: answers[answers.length - 1] ?? null,
  };
};
