import t from 'tap';
import { startTestServer } from '../support/server.js';
import { startWooServer, wooProductJson } from '../support/woocommerce-server.js';
import { clockAt } from '../support/clock.js';
import {
  eventsAfter,
  lastEventSeq,
  platformSignature,
  syncAndWait,
} from '../support/integrations.js';

const PRIVATE = { ALLOW_PRIVATE_TARGETS: 'true' };

t.test(
  'a WooCommerce store syncs through REST v3, and its webhooks apply between syncs',
  async (t) => {
    const clock = clockAt('2026-11-25T10:00:00.000Z');
    const woo = await startWooServer({
      products: 6,
      consumerKey: 'ck_e2e',
      consumerSecret: 'cs_e2e',
    });
    t.teardown(() => woo.close());
    const server = await startTestServer(t, PRIVATE, { now: clock.now });
    const db = server.server.store.db;
    const secret = 'woo-webhook-secret';
    const created = await server.request('POST', '/v1/integrations', {
      body: {
        platform: 'woocommerce',
        shop_domain: new URL(woo.origin).host,
        credentials: { consumer_key: 'ck_e2e', consumer_secret: 'cs_e2e', webhook_secret: secret },
      },
    });
    t.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    t.equal((await server.request('POST', `/v1/integrations/${id}/test`)).body.status, 'success');

    // Products 3 and 6 are variable (two variations each): 4 simple + 4 variations.
    let seq = await lastEventSeq(db);
    const first = await syncAndWait(server, id);
    t.match(
      first,
      { status: 'succeeded', fetched: 8, created: 8, failed: 0 },
      JSON.stringify(first),
    );
    t.equal((await eventsAfter(db, seq)).filter((e) => e.type === 'product.created').length, 8);

    clock.advance(60);
    seq = await lastEventSeq(db);
    t.match(await syncAndWait(server, id), { fetched: 8, unchanged: 8, created: 0, updated: 0 });
    t.same(
      (await eventsAfter(db, seq)).map((e) => e.type),
      ['integration.sync.completed'],
    );

    // A price change, a removed product, a variation added, a bad product.
    clock.advance(60);
    woo.catalogue.update(1, (p) => {
      p.price = p.regular_price = '77.00';
    });
    woo.catalogue.remove(2);
    woo.catalogue.update(3, (p) => {
      const v = p.variationList[0]!;
      p.variationList.push({
        ...v,
        id: v.id + 50,
        sku: `${v.sku}-G`,
        attributes: [{ ...v.attributes[0]!, option: 'Green' }],
      });
    });
    woo.catalogue.update(4, (p) => {
      p.price = p.regular_price = '';
    });
    seq = await lastEventSeq(db);
    const changed = await syncAndWait(server, id);
    t.match(
      changed,
      { status: 'succeeded', updated: 1, created: 1, deactivated: 1, failed: 1 },
      JSON.stringify(changed),
    );
    t.equal(changed.errors[0].external_id, '4');
    const events = await eventsAfter(db, seq);
    const updates = events.filter((e) => e.type === 'product.updated').map((e) => e.data);
    t.match(updates, [{ price: 77 }, { status: 'inactive' }]);

    // Inbound webhook: product.updated of a simple product, signed as WooCommerce signs.
    clock.advance(60);
    const product5 = woo.catalogue.update(5, (p) => {
      p.price = p.regular_price = '12.25';
    });
    const raw = JSON.stringify(wooProductJson(product5));
    const headers = {
      'content-type': 'application/json',
      'x-wc-webhook-topic': 'product.updated',
      'x-wc-webhook-id': '7',
      'x-wc-webhook-delivery-id': 'a1b2c3',
      'x-wc-webhook-signature': platformSignature(secret, raw),
    };
    seq = await lastEventSeq(db);
    const hook = await server.request('POST', `/v1/integrations/${id}/webhook`, {
      key: null,
      raw,
      headers,
    });
    t.equal(hook.status, 200, hook.text);
    t.match(hook.body, { status: 'applied', updated: 1 });
    t.match(await eventsAfter(db, seq), [{ type: 'product.updated', data: { price: 12.25 } }]);
    const replay = await server.request('POST', `/v1/integrations/${id}/webhook`, {
      key: null,
      raw,
      headers,
    });
    t.equal(replay.body.status, 'duplicate');
    const unsigned = await server.request('POST', `/v1/integrations/${id}/webhook`, {
      key: null,
      raw,
      headers: { ...headers, 'x-wc-webhook-delivery-id': 'zz', 'x-wc-webhook-signature': '' },
    });
    t.equal(unsigned.status, 401);
    t.equal(
      (await eventsAfter(db, seq)).length,
      1,
      'the replay and the unsigned one changed nothing',
    );

    const del = JSON.stringify({ id: 5 });
    const deleted = await server.request('POST', `/v1/integrations/${id}/webhook`, {
      key: null,
      raw: del,
      headers: {
        ...headers,
        'x-wc-webhook-topic': 'product.deleted',
        'x-wc-webhook-delivery-id': 'd5',
        'x-wc-webhook-signature': platformSignature(secret, del),
      },
    });
    t.match(deleted.body, { status: 'applied', deactivated: 1 });
  },
);

t.test(
  "WooCommerce's unsigned URL check (webhook_id=N) is answered 200; nothing else unsigned",
  async (t) => {
    const server = await startTestServer(t, PRIVATE);
    const db = server.server.store.db;
    const create = async (body: Record<string, unknown>) => {
      const res = await server.request('POST', '/v1/integrations', { body });
      t.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    const woo = await create({
      platform: 'woocommerce',
      shop_domain: '127.0.0.1:9',
      credentials: { consumer_key: 'ck_p', consumer_secret: 'cs_p', webhook_secret: 'wh' },
    });
    const shopify = await create({
      platform: 'shopify',
      shop_domain: '127.0.0.1:9',
      credentials: { access_token: 'shpat_p', webhook_secret: 'wh' },
    });
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const hookshot = { ...form, 'user-agent': 'WooCommerce/10.3.0 Hookshot (WordPress/6.8.3)' };
    const post = (id: string, raw: string, headers: Record<string, string>) =>
      server.request('POST', `/v1/integrations/${id}/webhook`, { key: null, raw, headers });
    const seq = await lastEventSeq(db);

    // As WC_Webhook::deliver_ping sends it: WooCommerce saves the webhook only on exactly 200.
    const ping = await post(woo, 'webhook_id=42', hookshot);
    t.equal(ping.status, 200, ping.text);
    t.match(ping.body, { status: 'ignored', topic: null, created: 0, updated: 0, deactivated: 0 });
    t.equal((await post(woo, 'webhook_id=42', form)).status, 200, 'whatever the user agent');
    // The same ping again (a merchant saving the webhook twice) is answered the same.
    t.equal((await post(woo, 'webhook_id=42', hookshot)).status, 200);

    // Everything else unsigned stays 401: another body, another type, another platform.
    const refused: [string, string, Record<string, string>][] = [
      [woo, 'webhook_id=42&topic=product.updated', hookshot],
      [woo, 'webhook_id=', hookshot],
      [woo, 'webhook_id=42', { 'content-type': 'application/json' }],
      [woo, 'webhook_id=42', { 'content-type': 'text/plain' }],
      [woo, '{"webhook_id":42}', { 'content-type': 'application/json' }],
      [woo, 'webhook_id=42', { ...hookshot, 'x-wc-webhook-signature': 'bm90IGl0' }],
      [shopify, 'webhook_id=42', hookshot],
    ];
    for (const [id, raw, headers] of refused) {
      const res = await post(id, raw, headers);
      t.equal(res.status, 401, `${raw} ${JSON.stringify(headers)} -> ${res.status}`);
      t.equal(res.body.error.code, 'unauthorized');
    }
    t.equal((await post('int_doesnotexist00', 'webhook_id=42', hookshot)).status, 404);

    // Nothing recorded: no receipt (a later real delivery is not a duplicate), no event.
    const receipts = await db.selectFrom('integration_webhook_receipts').selectAll().execute();
    t.same(receipts, []);
    t.same(await eventsAfter(db, seq), []);
  },
);

t.test('a variable product’s webhook applies its variations, read from WooCommerce', async (t) => {
  const clock = clockAt('2026-11-25T10:00:00.000Z');
  const woo = await startWooServer({ products: 4, consumerKey: 'ck_v', consumerSecret: 'cs_v' });
  t.teardown(() => woo.close());
  const server = await startTestServer(t, PRIVATE, { now: clock.now });
  const db = server.server.store.db;
  const secret = 'woo-variable-secret';
  const created = await server.request('POST', '/v1/integrations', {
    body: {
      platform: 'woocommerce',
      shop_domain: new URL(woo.origin).host,
      credentials: { consumer_key: 'ck_v', consumer_secret: 'cs_v', webhook_secret: secret },
    },
  });
  const id = created.body.id as string;
  // Product 3 is variable: variations 10000030 and 10000031.
  t.match(await syncAndWait(server, id), { status: 'succeeded', created: 5 });
  let delivery = 0;
  const send = async (productId: number) => {
    const raw = JSON.stringify(wooProductJson(woo.catalogue.get(productId)!));
    return server.request('POST', `/v1/integrations/${id}/webhook`, {
      key: null,
      raw,
      headers: {
        'content-type': 'application/json',
        'x-wc-webhook-topic': 'product.updated',
        'x-wc-webhook-id': '9',
        'x-wc-webhook-delivery-id': String(++delivery),
        'x-wc-webhook-signature': platformSignature(secret, raw),
      },
    });
  };
  const productOf = async (externalId: string) => {
    const row = await db
      .selectFrom('integration_products')
      .select('product_id')
      .where('integration_id', '=', id)
      .where('external_id', '=', externalId)
      .executeTakeFirstOrThrow();
    return (await server.request('GET', `/v1/products/${row.product_id}`)).body;
  };

  // A variation's price changes: the webhook (ids only in its payload) applies it now.
  clock.advance(60);
  woo.catalogue.update(3, (p) => {
    p.variationList[1]!.price = p.variationList[1]!.regular_price = '61.00';
  });
  let seq = await lastEventSeq(db);
  let hook = await send(3);
  t.equal(hook.status, 200, hook.text);
  t.match(hook.body, { status: 'applied', updated: 1, unchanged: 1, created: 0, deactivated: 0 });
  t.match(await eventsAfter(db, seq), [{ type: 'product.updated', data: { price: 61 } }]);
  t.equal((await productOf('10000031')).price, 61);

  // A variation added and another removed, in one webhook.
  clock.advance(60);
  woo.catalogue.update(3, (p) => {
    const [first] = p.variationList.splice(0, 1);
    p.variationList.push({ ...first!, id: 10000032, sku: 'WOO-3-GREEN', price: '12.00' });
  });
  seq = await lastEventSeq(db);
  hook = await send(3);
  t.match(hook.body, { status: 'applied', created: 1, deactivated: 1, unchanged: 1 });
  t.equal((await productOf('10000030')).status, 'inactive');
  t.equal((await productOf('10000032')).price, 12);
  t.same((await eventsAfter(db, seq)).map((e) => e.type).sort(), [
    'product.created',
    'product.updated',
  ]);

  // The next sync finds nothing left to do.
  clock.advance(60);
  t.match(await syncAndWait(server, id), { created: 0, updated: 0, deactivated: 0, unchanged: 5 });
});
