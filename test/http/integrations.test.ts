import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startTestServer } from '../support/server.js';
import { startFeedServer } from '../support/feed-server.js';
import { clockAt } from '../support/clock.js';
import {
  eventsAfter,
  feedProduct,
  jsonl,
  lastEventSeq,
  platformSignature,
  syncAndWait,
} from '../support/integrations.js';

const PRIVATE = { ALLOW_PRIVATE_TARGETS: 'true' };

t.test('a feed URL syncs: first sync, unchanged, price change, removal, variant, bad item', async (t) => {
  const clock = clockAt('2026-11-25T10:00:00.000Z');
  const feeds = await startFeedServer(t);
  const server = await startTestServer(t, PRIVATE, { now: clock.now });
  const db = server.server.store.db;
  const lines = [
    feedProduct('A1', { item_group_id: 'GA' , color: 'Black', size: '10' }),
    feedProduct('A2', { item_group_id: 'GA', color: 'Black', size: '11' }),
    feedProduct('B1', { brand: 'Contoso', price: '5.00 USD' }),
  ];
  feeds.set('/products.jsonl', jsonl(lines));
  const created = await server.request('POST', '/v1/integrations', {
    body: { platform: 'feed', settings: { url: feeds.url('/products.jsonl') } },
  });
  t.equal(created.status, 201, created.text);
  const id = created.body.id as string;
  t.match(id, /^int_/);
  t.equal(created.body.shop_domain, new URL(feeds.origin).host);

  let seq = await lastEventSeq(db);
  const first = await syncAndWait(server, id);
  t.match(first, { status: 'succeeded', fetched: 3, created: 3, updated: 0, failed: 0 });
  let events = await eventsAfter(db, seq);
  t.same(
    events.map((e) => e.type),
    ['product.created', 'product.created', 'product.created', 'integration.sync.completed'],
  );
  const products = (await server.request('GET', '/v1/products?limit=250')).body.products;
  t.equal(products.length, 3);
  const byName = Object.fromEntries(products.map((p: any) => [p.name, p]));
  t.equal(byName['Product B1'].attributes.brand, 'Contoso');
  t.equal(byName['Product A1'].attributes.item_group_id, 'GA');
  t.equal(byName['Product A1'].category, 'Apparel > Shoes');
  console.log(JSON.stringify(byName['Product A1']));
});
