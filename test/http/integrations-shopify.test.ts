import t from 'tap';
import { startTestServer } from '../support/server.js';
import { startShopifyServer, webhookProduct } from '../support/shopify-server.js';
import { clockAt } from '../support/clock.js';
import {
  eventsAfter,
  lastEventSeq,
  platformSignature,
  syncAndWait,
} from '../support/integrations.js';

const PRIVATE = { ALLOW_PRIVATE_TARGETS: 'true' };

t.test(
  'a Shopify store syncs through the Admin API, and its webhooks apply between syncs',
  async (t) => {
    const clock = clockAt('2026-11-25T10:00:00.000Z');
    // Shopify's rate-limit bucket refills by its own clock; the sync's waits move that clock.
    let shopMs = Date.parse('2026-11-25T10:00:00.000Z');
    const waits: number[] = [];
    const shop = await startShopifyServer({
      products: 4,
      accessToken: 'shpat_e2e',
      now: () => shopMs,
    });
    t.teardown(() => shop.close());
    const server = await startTestServer(t, PRIVATE, {
      now: clock.now,
      integrations: {
        sleep: async (ms) => {
          waits.push(ms);
          shopMs += ms;
        },
      },
    });
    const db = server.server.store.db;
    const secret = 'shopify-webhook-secret';
    const created = await server.request('POST', '/v1/integrations', {
      body: {
        platform: 'shopify',
        shop_domain: new URL(shop.origin).host,
        credentials: { access_token: 'shpat_e2e', webhook_secret: secret },
        // The removals below make a quarter of the products inactive: allowed here.
        settings: { max_drop: 0.5 },
      },
    });
    t.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    const test = await server.request('POST', `/v1/integrations/${id}/test`);
    t.equal(test.body.status, 'success', test.body.message);

    let seq = await lastEventSeq(db);
    const first = await syncAndWait(server, id);
    t.match(
      first,
      { status: 'succeeded', fetched: 8, created: 8, failed: 0 },
      JSON.stringify(first),
    );
    const createdEvents = (await eventsAfter(db, seq)).filter((e) => e.type === 'product.created');
    t.equal(createdEvents.length, 8);
    const groupOf = (p: any) => p.attributes.item_group_id;
    t.same([...new Set(createdEvents.map((e) => groupOf(e.data)))].sort(), ['1', '2', '3', '4']);

    // Nothing changed on Shopify: every item unchanged, no product event.
    clock.advance(60);
    seq = await lastEventSeq(db);
    const again = await syncAndWait(server, id);
    t.match(again, { fetched: 8, unchanged: 8, created: 0, updated: 0, deactivated: 0 });
    t.same(
      (await eventsAfter(db, seq)).map((e) => e.type),
      ['integration.sync.completed'],
    );

    // A price change, a removed product, a variant added, a bad product.
    clock.advance(60);
    shop.catalogue.update(1, (p) => {
      for (const v of p.variants) v.price = '99.00';
    });
    shop.catalogue.remove(2);
    shop.catalogue.update(3, (p) => {
      p.variants.push({
        ...p.variants[0]!,
        id: 399,
        title: 'L',
        sku: 'SYN-3-L',
        barcode: null,
        options: [{ name: 'Size', value: 'L' }],
      });
    });
    shop.catalogue.update(4, (p) => {
      p.variants[0]!.price = null;
    });
    seq = await lastEventSeq(db);
    const changed = await syncAndWait(server, id);
    t.match(
      changed,
      { status: 'succeeded', updated: 2, created: 1, deactivated: 2, failed: 1 },
      JSON.stringify(changed),
    );
    t.equal(changed.errors[0].external_id, '401');
    const kinds = (await eventsAfter(db, seq)).map((e) => e.type);
    t.equal(
      kinds.filter((k) => k === 'product.updated').length,
      4,
      'two price changes, two deactivations',
    );
    t.equal(kinds.filter((k) => k === 'product.created').length, 1);

    // A throttled store: the bucket is empty, the sync waits for it (by Shopify's figures).
    clock.advance(60);
    shop.bucket.available = 0;
    waits.length = 0;
    const throttled = await syncAndWait(server, id);
    t.match(throttled, { status: 'succeeded', fetched: 7, failed: 1, unchanged: 6 });
    t.ok(
      waits.length > 0 && waits.every((ms) => ms > 0),
      `waited ${waits.join(', ')} ms for the bucket`,
    );
    t.ok(
      shop.requests.some((r) => r.throttled),
      'Shopify answered THROTTLED at least once',
    );

    // Inbound webhook: products/update, signed; then the same delivery again.
    clock.advance(60);
    const product1 = shop.catalogue.update(1, (p) => {
      for (const v of p.variants) v.price = '42.00';
    });
    const raw = JSON.stringify(webhookProduct(product1));
    const headers = {
      'content-type': 'application/json',
      'x-shopify-topic': 'products/update',
      'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
      'x-shopify-hmac-sha256': platformSignature(secret, raw),
    };
    seq = await lastEventSeq(db);
    const hook = await server.request('POST', `/v1/integrations/${id}/webhook`, {
      key: null,
      raw,
      headers,
    });
    t.equal(hook.status, 200, hook.text);
    t.match(hook.body, { status: 'applied', updated: 2 });
    let events = await eventsAfter(db, seq);
    t.same(
      events.map((e) => e.type),
      ['product.updated', 'product.updated'],
    );
    t.equal(events[0]!.data.price, 42);
    const replay = await server.request('POST', `/v1/integrations/${id}/webhook`, {
      key: null,
      raw,
      headers,
    });
    t.equal(replay.body.status, 'duplicate');
    const wrong = await server.request('POST', `/v1/integrations/${id}/webhook`, {
      key: null,
      raw,
      headers: {
        ...headers,
        'x-shopify-webhook-id': 'other',
        'x-shopify-hmac-sha256': platformSignature('nope', raw),
      },
    });
    t.equal(wrong.status, 401);
    t.equal(
      (await eventsAfter(db, seq)).length,
      2,
      'the replay and the wrong signature changed nothing',
    );

    // products/delete: the product's variants become inactive.
    const del = JSON.stringify({ id: 3 });
    const deleted = await server.request('POST', `/v1/integrations/${id}/webhook`, {
      key: null,
      raw: del,
      headers: {
        ...headers,
        'x-shopify-topic': 'products/delete',
        'x-shopify-webhook-id': 'del-3',
        'x-shopify-hmac-sha256': platformSignature(secret, del),
      },
    });
    t.match(deleted.body, { status: 'applied', deactivated: 3 });

    // Credentials refused: the run fails, the integration is in error, both events recorded.
    shop.failNext.push({ status: 401, body: '{"errors":"[API] Invalid API key or access token"}' });
    seq = await lastEventSeq(db);
    const refused = await syncAndWait(server, id);
    t.equal(refused.status, 'failed');
    t.ok(refused.error);
    events = await eventsAfter(db, seq);
    t.same(
      events.map((e) => e.type),
      ['integration.sync.failed', 'integration.disconnected'],
    );
    const after = (await server.request('GET', `/v1/integrations/${id}`)).body;
    t.match(after, { status: 'error', last_error: refused.error });
  },
);

t.test(
  'SHOPIFY_API_VERSION picks the Admin API path; settings.api_version overrides it',
  async (t) => {
    const shop = await startShopifyServer({ products: 2, accessToken: 'shpat_version' });
    t.teardown(() => shop.close());
    const server = await startTestServer(t, { ...PRIVATE, SHOPIFY_API_VERSION: '2025-07' });
    const create = async (settings: Record<string, unknown>) => {
      const res = await server.request('POST', '/v1/integrations', {
        body: {
          platform: 'shopify',
          shop_domain: new URL(shop.origin).host,
          credentials: { access_token: 'shpat_version' },
          settings,
        },
      });
      t.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    const adminPaths = (from: number) =>
      new Set(
        shop.requests
          .slice(from)
          .map((r) => r.path)
          .filter((p) => p.startsWith('/admin/api/')),
      );

    const byEnv = await create({});
    let from = shop.requests.length;
    t.match(await syncAndWait(server, byEnv), { status: 'succeeded', created: 4 });
    t.same([...adminPaths(from)], ['/admin/api/2025-07/graphql.json']);

    const bySetting = await create({ api_version: '2026-04' });
    from = shop.requests.length;
    t.match(await syncAndWait(server, bySetting), { status: 'succeeded' });
    t.same([...adminPaths(from)], ['/admin/api/2026-04/graphql.json']);
  },
);

t.test(
  'a bulk file whose last line is cut fails the whole run: nothing applied, nothing announced',
  async (t) => {
    const shop = await startShopifyServer({ products: 12, accessToken: 'shpat_cut' });
    t.teardown(() => shop.close());
    const server = await startTestServer(t, PRIVATE, {
      integrations: { sleep: async () => {} },
    });
    const db = server.server.store.db;
    const created = await server.request('POST', '/v1/integrations', {
      body: {
        platform: 'shopify',
        shop_domain: new URL(shop.origin).host,
        credentials: { access_token: 'shpat_cut' },
        settings: { bulk_threshold: 10, bulk_poll_seconds: 1 },
      },
    });
    t.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    const first = await syncAndWait(server, id);
    t.match(first, { status: 'succeeded', created: 24, failed: 0 }, JSON.stringify(first));
    const before = await server.request('GET', '/v1/products?limit=100');

    // A price changes on Shopify, and the next export's file loses its last 10 bytes.
    shop.catalogue.update(1, (p) => {
      for (const v of p.variants) v.price = '99.00';
    });
    shop.cutNextBulkFile = 10;
    const seq = await lastEventSeq(db);
    const cut = await syncAndWait(server, id);
    t.equal(shop.bulkOperations.length, 2, 'the run read a bulk file');
    t.match(cut, { status: 'failed', created: 0, updated: 0, deactivated: 0 });
    t.match(
      cut.error,
      /^the bulk operation's file is cut short: its last line \(line \d+\) has no line end and is not whole JSON/,
    );
    t.same(
      (await eventsAfter(db, seq)).map((e) => e.type),
      ['integration.sync.failed'],
      'no product event',
    );
    const after = await server.request('GET', '/v1/products?limit=100');
    t.same(after.body, before.body, 'the catalogue is as it was');

    // The whole file next time: the change applies.
    const again = await syncAndWait(server, id);
    t.match(again, { status: 'succeeded', updated: 2, failed: 0 }, JSON.stringify(again));
  },
);
