import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { TestServer } from './server.js';

/** One product line of an OpenAI / ACP flat feed (JSONL), with overrides. */
export function feedProduct(
  id: string,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    id,
    title: `Product ${id}`,
    description: `The product ${id}.`,
    link: `https://shop.example.com/p/${id}`,
    image_link: `https://shop.example.com/img/${id}.jpg`,
    price: '19.99 USD',
    availability: 'in_stock',
    brand: 'Northwind',
    product_category: 'Apparel > Shoes',
    is_eligible_search: 'true',
    is_eligible_checkout: 'false',
    ...overrides,
  };
}

export function jsonl(lines: Record<string, string>[]): string {
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

/** The base64 HMAC-SHA256 of a body, as Shopify and WooCommerce sign webhooks. */
export function platformSignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

/** Starts a sync through the API and waits for it to end; returns the finished run. */
export async function syncAndWait(server: TestServer, id: string): Promise<any> {
  const res = await server.request('POST', `/v1/integrations/${id}/sync`);
  if (res.status !== 202) throw new Error(`sync answered ${res.status}: ${res.text}`);
  await server.server.deps.integrations!.settled(res.body.id);
  const status = await server.request('GET', `/v1/integrations/${id}/sync/status`);
  return status.body.last;
}

/** Events recorded since a sequence number, oldest first. */
export async function eventsAfter(db: Kysely<Database>, seq: number) {
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .where('seq', '>', seq)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({ seq: r.seq, type: r.type, data: JSON.parse(r.data) }));
}

export async function lastEventSeq(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}
