import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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

t.test(
  'a feed URL syncs: first sync, unchanged, price change, removal, variant, bad item',
  async (t) => {
    const clock = clockAt('2026-11-25T10:00:00.000Z');
    const feeds = await startFeedServer(t);
    const server = await startTestServer(t, PRIVATE, { now: clock.now });
    const db = server.server.store.db;
    const lines = [
      feedProduct('A1', { item_group_id: 'GA', color: 'Black', size: '10' }),
      feedProduct('A2', { item_group_id: 'GA', color: 'Black', size: '11' }),
      feedProduct('B1', { brand: 'Contoso', price: '5.00 USD' }),
    ];
    feeds.set('/products.jsonl', jsonl(lines));
    const created = await server.request('POST', '/v1/integrations', {
      // The removal below makes one of three products inactive: allowed here.
      body: { platform: 'feed', settings: { url: feeds.url('/products.jsonl'), max_drop: 0.5 } },
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
    const a1 = byName['Product A1'];

    // Unchanged file: the feed answers 304, nothing is written, only the run is recorded.
    clock.advance(60);
    seq = await lastEventSeq(db);
    const again = await syncAndWait(server, id);
    t.match(again, { status: 'succeeded', created: 0, updated: 0, deactivated: 0, failed: 0 });
    t.same(
      (await eventsAfter(db, seq)).map((e) => e.type),
      ['integration.sync.completed'],
    );
    t.ok(
      feeds.requests.some((r) => r.status === 304),
      'the feed answered 304',
    );

    // A new file with the same products (reordered): read whole, every item unchanged.
    clock.advance(60);
    feeds.set('/products.jsonl', jsonl([...lines].reverse()));
    seq = await lastEventSeq(db);
    const reordered = await syncAndWait(server, id);
    t.match(reordered, { status: 'succeeded', fetched: 3, unchanged: 3, created: 0, updated: 0 });
    t.same(
      (await eventsAfter(db, seq)).map((e) => e.type),
      ['integration.sync.completed'],
    );
    const a1After = (await server.request('GET', `/v1/products/${a1.id}`)).body;
    t.equal(a1After.updated_at, a1.updated_at, 'an unchanged product is not written');

    // A price change: one product.updated, with the new price.
    clock.advance(60);
    lines[2] = feedProduct('B1', { brand: 'Contoso', price: '6.50 USD' });
    feeds.set('/products.jsonl', jsonl(lines));
    seq = await lastEventSeq(db);
    const priced = await syncAndWait(server, id);
    t.match(priced, { fetched: 3, updated: 1, unchanged: 2, created: 0 });
    events = await eventsAfter(db, seq);
    t.same(
      events.map((e) => e.type),
      ['product.updated', 'integration.sync.completed'],
    );
    t.equal(events[0]!.data.price, 6.5);
    t.equal(events[0]!.data.id, byName['Product B1'].id, 'the same product, not a new one');

    // A product gone from the feed becomes inactive (never deleted); a variant is added.
    clock.advance(60);
    const withoutA2 = [
      lines[0]!,
      lines[2]!,
      feedProduct('A3', { item_group_id: 'GA', color: 'Red', size: '10' }),
    ];
    feeds.set('/products.jsonl', jsonl(withoutA2));
    seq = await lastEventSeq(db);
    const removed = await syncAndWait(server, id);
    t.match(removed, { fetched: 3, created: 1, deactivated: 1, unchanged: 2 });
    events = await eventsAfter(db, seq);
    t.same(
      events.map((e) => e.type),
      ['product.created', 'product.updated', 'integration.sync.completed'],
    );
    t.match(events[0]!.data, {
      name: 'Product A3',
      attributes: { item_group_id: 'GA', color: 'Red' },
    });
    t.match(events[1]!.data, { id: byName['Product A2'].id, status: 'inactive' });
    const a2 = await server.request('GET', `/v1/products/${byName['Product A2'].id}`);
    t.equal(a2.status, 200, 'the product is kept');
    t.equal(a2.body.status, 'inactive');
    t.equal((await server.request('GET', `/v1/integrations/${id}`)).body.product_count, 3);

    // A bad item among good ones fails alone, with the platform's id, the field and the reason.
    clock.advance(60);
    feeds.set(
      '/products.jsonl',
      jsonl([
        ...withoutA2,
        feedProduct('BAD1', { title: 'x'.repeat(200) }),
        feedProduct('BAD2', { price: '1.999 USD' }),
        feedProduct('A2', { item_group_id: 'GA', color: 'Black', size: '11' }),
      ]),
    );
    const bad = await syncAndWait(server, id);
    t.match(bad, { status: 'succeeded', fetched: 6, failed: 2, updated: 1, unchanged: 3 });
    t.same(bad.errors.map((e: any) => e.external_id).sort(), ['BAD1', 'BAD2']);
    for (const e of bad.errors)
      t.ok(e.field && e.reason, `${e.external_id}: ${e.field} ${e.reason}`);
    t.equal(
      (await server.request('GET', `/v1/products/${byName['Product A2'].id}`)).body.status,
      'active',
      'a product that comes back is active again',
    );

    // History, newest first, paginated like the other lists.
    const history = await server.request('GET', `/v1/integrations/${id}/sync/history?limit=2`);
    t.equal(history.status, 200);
    t.equal(history.body.syncs.length, 2);
    t.match(history.body.pagination, { limit: 2, offset: 0, total: 6, has_more: true });
    t.equal(history.body.syncs[0].id, bad.id);
    const integration = (await server.request('GET', `/v1/integrations/${id}`)).body;
    t.match(integration, {
      status: 'connected',
      last_sync: clock.now().toISOString(),
      last_error: null,
      sync_status: 'idle',
    });
  },
);

t.test(
  'CRUD, permissions and validation; credentials never returned, encrypted at rest',
  async (t) => {
    const feeds = await startFeedServer(t);
    feeds.set('/f.jsonl', jsonl([feedProduct('X1')]));
    const server = await startTestServer(t, PRIVATE);
    const secrets = {
      username: 'merchant',
      password: 'pa55-very-secret',
      webhook_secret: 'whsec-inbound-1',
    };
    const body = {
      platform: 'feed',
      settings: { url: feeds.url('/f.jsonl') },
      credentials: secrets,
    };

    const keyFile = path.join(server.dir, 'secret.key');
    t.notOk(fs.existsSync(keyFile), 'no key file before credentials are stored');
    const ro = await server.request('POST', '/v1/integrations', {
      body,
      key: server.keys.read_only,
    });
    t.equal(ro.status, 403);
    const res = await server.request('POST', '/v1/integrations', {
      body,
      key: server.keys.read_write,
    });
    t.equal(res.status, 201);
    t.equal(res.headers.get('location'), `/v1/integrations/${res.body.id}`);
    t.equal(res.body.credentials_set, true);
    t.equal(fs.statSync(keyFile).mode & 0o777, 0o600, 'the key file is created with mode 0600');
    const id = res.body.id as string;

    // Encrypted at rest: the stored value is AES-GCM ciphertext, no secret in the clear.
    const raw = await server.server.store.db
      .selectFrom('integrations')
      .select('credentials')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    t.match(raw.credentials, /^v1\.[0-9a-f]{8}\./);
    for (const value of Object.values(secrets)) t.notMatch(raw.credentials!, value);

    const texts: string[] = [res.text];
    for (const [method, url, key] of [
      ['GET', '/v1/integrations', server.keys.read_only],
      ['GET', `/v1/integrations/${id}`, server.keys.read_only],
      ['POST', `/v1/integrations/${id}/test`, server.keys.read_write],
      ['GET', `/v1/integrations/${id}/sync/status`, server.keys.read_only],
    ] as const) {
      const r = await server.request(method, url, { key });
      t.equal(r.status, 200, `${method} ${url}`);
      texts.push(r.text);
    }
    const sync = await syncAndWait(server, id);
    t.equal(sync.status, 'succeeded');
    texts.push(JSON.stringify(sync));
    const events = await eventsAfter(server.server.store.db, 0);
    texts.push(JSON.stringify(events));
    for (const text of texts) {
      for (const value of Object.values(secrets))
        t.notMatch(text, value, 'no secret in any answer or event');
    }
    t.same(
      events.map((e) => e.type).filter((k) => k.startsWith('integration.')),
      ['integration.connected', 'integration.sync.completed'],
    );

    const list = await server.request('GET', '/v1/integrations?limit=1', {
      key: server.keys.read_only,
    });
    t.match(list.body, {
      integrations: [{ id }],
      pagination: { limit: 1, offset: 0, total: 1, has_more: false },
    });
    t.equal(
      (await server.request('POST', `/v1/integrations/${id}/sync`, { key: server.keys.read_only }))
        .status,
      403,
    );
    t.equal(
      (
        await server.request('PUT', `/v1/integrations/${id}`, {
          key: server.keys.read_only,
          body: {},
        })
      ).status,
      403,
    );
    t.equal(
      (await server.request('DELETE', `/v1/integrations/${id}`, { key: server.keys.read_only }))
        .status,
      403,
    );

    // Validation names the field.
    const cases: [unknown, number, string][] = [
      [{}, 422, 'platform'],
      [{ platform: 'magento' }, 422, 'platform'],
      [{ platform: 'feed' }, 422, 'settings.url'],
      [{ platform: 'feed', settings: { url: 'ftp://x/y' } }, 422, 'settings.url'],
      [{ platform: 'shopify' }, 422, 'shop_domain'],
      [{ platform: 'shopify', shop_domain: 'not a host!' }, 422, 'shop_domain'],
      [
        { platform: 'shopify', shop_domain: 'a.myshopify.com', credentials: { token: 'x' } },
        422,
        'credentials.token',
      ],
      [
        {
          platform: 'woocommerce',
          shop_domain: 'w.example.com',
          credentials: { consumer_key: 'ck' },
        },
        422,
        'credentials.consumer_secret',
      ],
      [{ platform: 'feed', settings: { url: feeds.url('/f.jsonl') }, extra: 1 }, 422, 'extra'],
    ];
    for (const [input, status, field] of cases) {
      const r = await server.request('POST', '/v1/integrations', {
        body: input,
        headers: { prefer: 'envelope' },
      });
      t.equal(r.status, status, JSON.stringify(input));
      t.equal(r.body.error.details.field, field, JSON.stringify(input));
    }

    // Update: credentials replaced, then removed; a pause emits integration.disconnected.
    const put = await server.request('PUT', `/v1/integrations/${id}`, {
      body: { credentials: null, status: 'disconnected' },
    });
    t.equal(put.status, 200);
    t.match(put.body, { credentials_set: false, status: 'disconnected' });
    const resumed = await server.request('PUT', `/v1/integrations/${id}`, {
      body: { status: 'connected' },
    });
    t.equal(resumed.body.status, 'connected');
    const kinds = (await eventsAfter(server.server.store.db, 0)).map((e) => e.type);
    t.same(kinds.slice(-2), ['integration.disconnected', 'integration.connected']);

    const del = await server.request('DELETE', `/v1/integrations/${id}`);
    t.equal(del.status, 204);
    t.equal((await server.request('GET', `/v1/integrations/${id}`)).status, 404);
    t.equal((await server.request('GET', '/v1/products')).body.products.length, 1, 'products stay');
  },
);

t.test('private targets are refused without ALLOW_PRIVATE_TARGETS', async (t) => {
  const server = await startTestServer(t);
  for (const body of [
    { platform: 'feed', settings: { url: 'http://127.0.0.1:9/feed.csv' } },
    { platform: 'shopify', shop_domain: '10.0.0.1' },
    { platform: 'woocommerce', shop_domain: 'localhost' },
  ]) {
    const r = await server.request('POST', '/v1/integrations', {
      body,
      headers: { prefer: 'envelope' },
    });
    t.equal(r.status, 422, JSON.stringify(body));
    t.match(r.body.error.details.reason, /refused/);
  }
});

t.test('a test that fails says why; the status becomes error', async (t) => {
  const feeds = await startFeedServer(t);
  const server = await startTestServer(t, PRIVATE);
  const created = await server.request('POST', '/v1/integrations', {
    body: { platform: 'feed', settings: { url: feeds.url('/missing.csv') } },
  });
  const test = await server.request('POST', `/v1/integrations/${created.body.id}/test`);
  t.equal(test.status, 200);
  t.equal(test.body.status, 'failure');
  t.ok(test.body.message.length > 0);
  t.equal(test.body.details.connection_status, 'error');
  feeds.set('/missing.csv', 'id,title,price\nx,Thing,1.00 USD\n');
  const ok = await server.request('POST', `/v1/integrations/${created.body.id}/test`);
  t.match(ok.body, { status: 'success', details: { connection_status: 'connected' } });
  const kinds = (await eventsAfter(server.server.store.db, 0)).map((e) => e.type);
  t.same(kinds, ['integration.connected', 'integration.disconnected', 'integration.connected']);
});

t.test('one sync at a time: 409 while one runs', async (t) => {
  const feeds = await startFeedServer(t);
  feeds.hang('/slow.jsonl');
  const server = await startTestServer(t, PRIVATE);
  const created = await server.request('POST', '/v1/integrations', {
    body: { platform: 'feed', settings: { url: feeds.url('/slow.jsonl') } },
  });
  const id = created.body.id as string;
  const first = await server.request('POST', `/v1/integrations/${id}/sync`);
  t.equal(first.status, 202);
  t.match(first.body, { id: /^sync_/, status: 'running', trigger: 'api' });
  const second = await server.request('POST', `/v1/integrations/${id}/sync`);
  t.equal(second.status, 409);
  t.equal(second.body.error.code, 'conflict');
  const status = await server.request('GET', `/v1/integrations/${id}/sync/status`);
  t.match(status.body, { status: 'running', current: { id: first.body.id }, last: null });
  t.equal((await server.request('DELETE', `/v1/integrations/${id}`)).status, 409);
  t.equal((await server.request('GET', `/v1/integrations/${id}`)).body.sync_status, 'running');
  // Shutdown stops the run and records it as failed.
  const done = server.server.deps.integrations!.settled(first.body.id)!;
  await server.server.deps.integrations!.stop();
  const run = await done;
  t.match(run, { status: 'failed', error: /shut down/ });
});

t.test(
  'inbound webhooks: signature required, checked in constant time, replays ignored',
  async (t) => {
    const feeds = await startFeedServer(t);
    const server = await startTestServer(t, PRIVATE);
    const secret = 'inbound-secret';
    const created = await server.request('POST', '/v1/integrations', {
      body: {
        platform: 'feed',
        settings: { url: feeds.url('/f.csv') },
        credentials: { webhook_secret: secret },
      },
    });
    const url = `/v1/integrations/${created.body.id}/webhook`;
    const payload = JSON.stringify({ id: 1, title: 'x' });
    const send = (headers: Record<string, string>, raw = payload) =>
      server.request('POST', url, {
        key: null,
        raw,
        headers: { 'content-type': 'application/json', ...headers },
      });

    t.equal((await send({})).status, 401, 'unsigned');
    t.equal(
      (await send({ 'x-shopify-hmac-sha256': platformSignature('wrong', payload) })).status,
      401,
      'wrong secret',
    );
    t.equal((await send({ 'x-wc-webhook-signature': 'bm9wZQ==' })).status, 401, 'garbage');
    const signed = {
      'x-shopify-hmac-sha256': platformSignature(secret, payload),
      'x-shopify-webhook-id': 'w-1',
      'x-shopify-topic': 'products/update',
    };
    t.equal((await send(signed, payload + ' ')).status, 401, 'body changed after signing');
    const ok = await send(signed);
    t.equal(ok.status, 200, ok.text);
    t.equal(ok.body.status, 'ignored', 'a feed has no webhook changes');
    const replay = await send(signed);
    t.equal(replay.status, 200);
    t.equal(replay.body.status, 'duplicate');
    t.equal(
      (
        await server.request('POST', '/v1/integrations/int_nope/webhook', {
          key: null,
          raw: payload,
          headers: signed,
        })
      ).status,
      404,
    );
  },
);

t.test(
  'test answers within its deadline against a feed that never answers or stalls mid-body',
  async (t) => {
    const feeds = await startFeedServer(t);
    feeds.hang('/hang.csv');
    feeds.set('/stall.csv', 'id,title,price\n' + 'x,Thing,1.00 USD\n'.repeat(100));
    // The header line never comes whole: the first item cannot be read.
    feeds.stall('/stall.csv', 10);
    // 15 s in production; the idle timeout (30 s) is left as it is, so only the deadline ends it.
    const server = await startTestServer(t, PRIVATE, { integrations: { testTimeoutMs: 400 } });
    for (const path of ['/hang.csv', '/stall.csv']) {
      const created = await server.request('POST', '/v1/integrations', {
        body: { platform: 'feed', settings: { url: feeds.url(path) } },
      });
      t.equal(created.status, 201, created.text);
      const started = Date.now();
      const test = await server.request('POST', `/v1/integrations/${created.body.id}/test`);
      const took = Date.now() - started;
      t.equal(test.status, 200, path);
      t.match(test.body, {
        status: 'failure',
        message: 'the platform did not answer in full within 0.4 s: it is too slow, or stalled',
        details: { connection_status: 'error' },
      });
      t.ok(took < 10_000, `${path}: answered in ${took} ms`);
    }
  },
);

t.test(
  'a sync fails after the idle timeout (no byte) and at its total deadline (settings.timeout_s)',
  async (t) => {
    const feeds = await startFeedServer(t);
    feeds.hang('/hang.jsonl');
    feeds.set('/stall.jsonl', jsonl([feedProduct('A1'), feedProduct('A2')]));
    feeds.stall('/stall.jsonl', 10);
    // A server that sends a product every 50 ms, forever: never idle, never done.
    const drip = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      let n = 0;
      const timer = setInterval(() => res.write(jsonl([feedProduct(`D${++n}`)])), 50);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => drip.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      drip.closeAllConnections();
      return new Promise<void>((resolve) => drip.close(() => resolve()));
    });
    const dripUrl = `http://127.0.0.1:${(drip.address() as AddressInfo).port}/drip.jsonl`;
    // 30 s in production.
    const server = await startTestServer(t, PRIVATE, { integrations: { idleTimeoutMs: 300 } });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ url: feeds.url('/hang.jsonl') }, /^the feed could not be read: no answer within 0\.3 s$/],
      [
        { url: feeds.url('/stall.jsonl') },
        /^the feed could not be read: the answer stalled: no byte for 0\.3 s$/,
      ],
      [
        { url: dripUrl, timeout_s: 1 },
        /^the sync ran past its time limit of 1 s \(settings\.timeout_s\) and was stopped; nothing was applied$/,
      ],
    ];
    for (const [settings, error] of cases) {
      const created = await server.request('POST', '/v1/integrations', {
        body: { platform: 'feed', settings },
      });
      t.equal(created.status, 201, created.text);
      const started = Date.now();
      const run = await syncAndWait(server, created.body.id as string);
      const took = Date.now() - started;
      t.match(run, { status: 'failed', error }, String(settings.url));
      t.ok(took < 10_000, `ended in ${took} ms`);
    }
    t.equal(feeds.count('/hang.jsonl'), 1, 'a silent server is not asked again');
    t.equal(feeds.count('/stall.jsonl'), 1);
  },
);
