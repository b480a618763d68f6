/**
 * The stripe delivery against a local Stripe that answers the Product Catalog Import API v2
 * as Stripe documents it (test/support/stripe-server.ts): an import created, the CSV PUT to
 * its pre-signed URL, its status read to its end, the counts kept; an unchanged catalogue is
 * `skipped` (no import); a changed price is one import; a 30% drop is `held` until released,
 * and replace mode then leaves Stripe's catalog as the shop's; a failed import and a refused
 * key fail the delivery with Stripe's answer, retried; the definition's rules.
 */
import { createHmac } from 'node:crypto';
import t from 'tap';
import { startStripeServer } from '../support/stripe-server.js';
import { runFeeds, seedChannelProducts, waitFor } from '../support/feeds.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ENV = { ALLOW_PRIVATE_TARGETS: 'true', FEED_DELIVERY_RETRY_SCHEDULE: '0.05,0.05' };
const KEY = 'sk_test_51AgentshelfLocalStripeKey';

interface Delivery {
  id: string;
  status: string;
  products: number;
  attempts: number;
  error: string | null;
  next_attempt_at: string | null;
  remote: Record<string, unknown> | null;
}

function stripeFeed(apiUrl: string, delivery: Record<string, unknown> = {}) {
  return {
    name: 'Stripe',
    profile: 'stripe',
    format: 'csv',
    delivery: { type: 'stripe', api_url: apiUrl, ...delivery },
    credentials: { api_key: KEY },
  };
}

/** Waits until the newest delivery has left pending and delivering. */
async function settled(s: TestServer, feedId: string, until = (_d: Delivery) => true) {
  return waitFor(async () => {
    const res = await s.request('GET', `/v1/feeds/${feedId}/deliveries`);
    const [last] = res.body.deliveries as Delivery[];
    return last && !['pending', 'delivering'].includes(last.status) && until(last)
      ? last
      : undefined;
  });
}

t.test(
  'a stripe feed imported into Stripe: import, skip, change, hold, release (replace)',
  async (t) => {
    const stripe = await startStripeServer(t, { key: KEY });
    stripe.processingReads = 2;
    const s = await startTestServer(t, ENV);
    await seedChannelProducts(s, 10);
    const created = await s.request('POST', '/v1/feeds', { body: stripeFeed(stripe.url) });
    t.equal(created.status, 201, created.text);
    t.match(created.body, {
      delivery: { type: 'stripe', mode: 'replace', max_drop: 0.2 },
      credentials_set: true,
    });
    t.notMatch(created.text, KEY, 'the key is never returned');
    const id = created.body.id;

    await runFeeds(s);
    const first = await settled(s, id);
    t.match(first, {
      status: 'delivered',
      products: 10,
      attempts: 1,
      remote: { api_url: stripe.url, mode: 'replace', status: 'succeeded', success_count: 10 },
    });
    t.match(String(first.remote?.import_id), /^pcimprt_test_/);
    t.equal(stripe.catalog.size, 10, "Stripe's catalog holds the ten products");
    t.same(
      stripe.requests.map(
        (r) => `${r.method} ${r.path.replace(/[0-9a-f]{24,}/, ':id')} ${r.status}`,
      ),
      [
        'POST /v2/commerce/product_catalog/imports 200',
        'PUT /files/upload/:id 200',
        'GET /v2/commerce/product_catalog/imports/pcimprt_test_:id 200',
        'GET /v2/commerce/product_catalog/imports/pcimprt_test_:id 200',
      ],
      'created, uploaded, read until it ended (processing, then succeeded)',
    );
    t.equal(stripe.imports[0]!.feed_type, 'product');

    const uploaded = stripe.uploadedBytes;
    await runFeeds(s);
    t.match(await settled(s, id, (d) => d.id !== first.id), { status: 'skipped' });
    t.equal(stripe.imports.length, 1, 'an unchanged catalogue makes no import');
    t.equal(stripe.uploadedBytes, uploaded, '0 bytes sent');

    await s.request('PUT', '/v1/products/P-03', { body: { price: 5 } });
    await runFeeds(s);
    t.match(await settled(s, id, (d) => d.status !== 'skipped'), { status: 'delivered' });
    t.equal(stripe.imports.length, 2, 'one new import');
    t.equal(stripe.catalog.get('P-03')?.price, '5.00 USD');

    for (const p of ['P-00', 'P-01', 'P-02']) {
      await s.request('PUT', `/v1/products/${p}`, { body: { status: 'inactive' } });
    }
    await runFeeds(s);
    const held = await settled(s, id, (d) => d.status === 'held');
    t.match(held, { status: 'held', products: 7 });
    t.equal(stripe.imports.length, 2, 'a held delivery imports nothing');
    t.equal(stripe.catalog.size, 10);
    const released = await s.request('POST', `/v1/feeds/${id}/deliveries/${held.id}/release`);
    t.equal(released.status, 200, released.text);
    t.match(await settled(s, id, (d) => d.id === held.id && d.status === 'delivered'), {
      products: 7,
      remote: { status: 'succeeded', success_count: 7 },
    });
    t.same(
      [...stripe.catalog.keys()].sort(),
      ['P-03', 'P-04', 'P-05', 'P-06', 'P-07', 'P-08', 'P-09'],
      'replace: the products gone from the shop left Stripe',
    );
    const events = await s.server.store.db
      .selectFrom('events')
      .select('type')
      .where('type', 'like', 'feed.deliver%')
      .orderBy('seq')
      .execute();
    t.same(
      events.map((e) => e.type),
      ['feed.delivered', 'feed.delivered', 'feed.delivery_held', 'feed.delivered'],
    );
  },
);

t.test(
  "upsert keeps what the file leaves out; Stripe's refusals fail the delivery, retried",
  async (t) => {
    const stripe = await startStripeServer(t, { key: KEY });
    const s = await startTestServer(t, ENV);
    await seedChannelProducts(s, 4);
    const created = await s.request('POST', '/v1/feeds', {
      body: stripeFeed(stripe.url, { mode: 'upsert', max_drop: 1 }),
    });
    t.equal(created.status, 201, created.text);
    const id = created.body.id;

    // A 500 on create is retried at once, with the same Idempotency-Key.
    stripe.failNextCreate(1, 500);
    await runFeeds(s);
    const delivered = await settled(s, id);
    t.match(delivered, { status: 'delivered', attempts: 1 });
    t.same(
      stripe.requests.filter((r) => r.method === 'POST').map((r) => r.status),
      [500, 200],
    );
    t.equal(stripe.imports.length, 1);
    t.equal(stripe.catalog.size, 4);

    await s.request('PUT', '/v1/products/P-00', { body: { status: 'inactive' } });
    await runFeeds(s);
    await settled(s, id, (d) => d.id !== delivered.id && d.status === 'delivered');
    t.equal(stripe.catalog.size, 4, 'upsert: the product left out stays at Stripe');

    // A refused key: Stripe's 401, its message kept, the key not in it.
    const wrong = await s.request('PUT', `/v1/feeds/${id}`, {
      body: { credentials: { api_key: 'sk_test_51WrongKeyWrongKeyWrong' } },
    });
    t.equal(wrong.status, 200, wrong.text);
    await s.request('PUT', '/v1/products/P-01', { body: { price: 7 } });
    await runFeeds(s);
    const refused = await settled(
      s,
      id,
      (d) => d.status === 'failed' && d.next_attempt_at === null,
    );
    t.equal(refused.attempts, 3, 'the first attempt and the two retries');
    t.match(refused.error, /^Stripe answered 401 creating the import: Invalid API Key provided/);
    t.notMatch(refused.error, 'sk_test_51WrongKeyWrongKeyWrong', 'the key is not in the record');
    const failures = await s.server.store.db
      .selectFrom('events')
      .select('type')
      .where('type', '=', 'feed.delivery_failed')
      .execute();
    t.equal(failures.length >= 3, true, 'feed.delivery_failed for each failed attempt');
  },
);

t.test('an import Stripe fails is a failed delivery with its code and message', async (t) => {
  const stripe = await startStripeServer(t, { key: KEY });
  const s = await startTestServer(t, {
    ...ENV,
    FEED_DELIVERY_RETRY_SCHEDULE: '600',
  });
  await seedChannelProducts(s, 2);
  const created = await s.request('POST', '/v1/feeds', { body: stripeFeed(stripe.url) });
  t.equal(created.status, 201, created.text);
  stripe.failNextImport(1);
  await runFeeds(s);
  const failed = await settled(s, created.body.id);
  t.match(failed, { status: 'failed', attempts: 1, remote: null });
  t.ok(failed.next_attempt_at, 'retried later');
  t.match(
    failed.error,
    /^Stripe's import pcimprt_test_\w+ failed: internal_error: An internal error occurred/,
  );
});

t.test('the definition: a stripe csv feed, a Stripe key, a guarded API address', async (t) => {
  const stripe = await startStripeServer(t, { key: KEY });
  const s = await startTestServer(t, ENV);
  const post = (body: Record<string, unknown>) => s.request('POST', '/v1/feeds', { body });
  const field = (res: { body: { error: { details: string } } }) =>
    res.body.error.details.split(':')[0];
  const delivery = { type: 'stripe', api_url: stripe.url };

  const openai = await post({ ...stripeFeed(stripe.url), profile: 'openai', format: 'csv' });
  t.equal(openai.status, 422);
  t.equal(field(openai), 'delivery.type');
  t.match(openai.body.error.message, /stripe takes a stripe feed in csv/);
  const noKey = await post({ name: 'x', profile: 'stripe', format: 'csv', delivery });
  t.equal(noKey.status, 422);
  t.equal(field(noKey), 'credentials');
  const notAKey = await post({
    ...stripeFeed(stripe.url),
    credentials: { api_key: 'pk_test_123' },
  });
  t.equal(notAKey.status, 422);
  t.equal(field(notAKey), 'credentials.api_key');
  t.notMatch(notAKey.text, 'pk_test_123', 'the refused key is not echoed');
  const badMode = await post({ ...stripeFeed(stripe.url, { mode: 'merge' }) });
  t.equal(badMode.status, 422);
  t.equal(field(badMode), 'delivery.mode');
  const badSecret = await post({
    ...stripeFeed(stripe.url),
    credentials: { api_key: KEY, webhook_secret: 'secret' },
  });
  t.equal(badSecret.status, 422);
  t.equal(field(badSecret), 'credentials.webhook_secret');

  const guarded = await startTestServer(t);
  const refused = await guarded.request('POST', '/v1/feeds', { body: stripeFeed(stripe.url) });
  t.equal(refused.status, 422);
  t.equal(field(refused), 'delivery.api_url');
  t.equal(stripe.requests.length, 0, 'nothing reached Stripe');
});

t.test("Stripe's events bring an import's ending to its delivery, signed or refused", async (t) => {
  const stripe = await startStripeServer(t, { key: KEY });
  stripe.processingReads = 1_000;
  const s = await startTestServer(t, { ...ENV, FEED_DELIVERY_WAIT_SECONDS: '0.3' });
  await seedChannelProducts(s, 3);
  const secret = 'whsec_LocalStripeSigningSecret0123';
  const created = await s.request('POST', '/v1/feeds', {
    body: { ...stripeFeed(stripe.url), credentials: { api_key: KEY, webhook_secret: secret } },
  });
  t.equal(created.status, 201, created.text);
  t.notMatch(created.text, secret, 'the signing secret is never returned');
  const id = created.body.id;
  const events = `${s.url}/v1/feeds/${id}/stripe-events`;

  await runFeeds(s);
  const waited = await settled(s, id);
  t.match(waited, { status: 'delivered', remote: { status: 'processing' } }, 'Stripe has the file');

  // A forged event changes nothing.
  stripe.events = { url: events, secret: 'whsec_NotTheFeedsSecret0000000' };
  await stripe.finish(String(waited.remote?.import_id));
  t.same(stripe.sentEvents, [
    { type: 'v2.commerce.product_catalog.imports.succeeded', status: 401 },
  ]);
  t.match((await settled(s, id)).remote, { status: 'processing' });

  // The real one: the import is read from Stripe and kept.
  const body = JSON.stringify({
    id: 'evt_1',
    object: 'v2.core.event',
    type: 'v2.commerce.product_catalog.imports.succeeded',
    related_object: { id: waited.remote?.import_id, type: 'v2.commerce.product_catalog.imports' },
  });
  const sign = (at: number) => {
    const hmac = createHmac('sha256', secret).update(`${at}.${body}`).digest('hex');
    return `t=${at},v1=${hmac}`;
  };
  const post = (signature: string | undefined, text = body) =>
    fetch(events, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(signature ? { 'stripe-signature': signature } : {}),
      },
      body: text,
    });
  const now = Math.floor(Date.now() / 1000);
  const stale = await post(sign(now - 600));
  t.equal(stale.status, 401, 'a signature older than five minutes is refused');
  t.match(await stale.text(), /Stripe-Signature/);
  t.equal((await post(undefined)).status, 401, 'unsigned');
  const ok = await post(sign(now));
  t.equal(ok.status, 200);
  t.match(await ok.json(), {
    status: 'recorded',
    import_id: waited.remote?.import_id,
    delivery_id: waited.id,
  });
  t.match((await settled(s, id)).remote, {
    status: 'succeeded',
    success_count: 3,
    api_url: stripe.url,
    mode: 'replace',
  });
  const other = JSON.stringify({
    type: 'v2.commerce.product_catalog.imports.succeeded',
    related_object: { id: 'pcimprt_test_unknown' },
  });
  const otherSigned = `t=${now},v1=${createHmac('sha256', secret).update(`${now}.${other}`).digest('hex')}`;
  const ignored = await post(otherSigned, other);
  t.equal(ignored.status, 200);
  t.match(await ignored.json(), { status: 'ignored', delivery_id: null });
  const missing = await fetch(`${s.url}/v1/feeds/feed_nope/stripe-events`, {
    method: 'POST',
    body: body,
  });
  t.equal(missing.status, 404);
});
