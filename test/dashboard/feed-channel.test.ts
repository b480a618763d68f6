/**
 * A channel run from the dashboard alone, against a local ACP Feed API
 * (test/support/acp-feed-server.ts, which validates every Product with ajv): create an ACP
 * feed, set its delivery (a refusal shown beside its field, the token never written back),
 * watch the delivery in the history, see a collapse held, filter by state, release it; the
 * preview names the products left out, linking to each; a profile the delivery cannot take is
 * refused beside the channel select.
 */
import t from 'tap';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import { startAcpFeedServer } from '../support/acp-feed-server.js';
import { startStripeServer } from '../support/stripe-server.js';
import { signInDashboard } from '../support/dashboard.js';
import { runFeeds, waitFor } from '../support/feeds.js';
import { formValues, tableRows, unescapeHtml } from '../support/html.js';
import { productBody, startTestServer } from '../support/server.js';

const TOKEN = 'acp_dashboard_token_0123456789';

/** A page's text as read: tags dropped, entities undone, spaces collapsed. */
const textOf = (page: string) => unescapeHtml(page.replace(/<[^>]+>/g, '').replace(/\s+/g, ' '));

t.test('an ACP channel set up, delivered, held and released from the dashboard', async (t) => {
  const api = await startAcpFeedServer(t, { token: TOKEN });
  const remoteFeed = api.createFeed('US');
  const s = await startTestServer(t, {
    ALLOW_PRIVATE_TARGETS: 'true',
    FEED_DELIVERY_RETRY_SCHEDULE: '0.05',
  });
  await seedSynthetic(s.server.store.db, { count: 40, brands: 2 });
  const writer = await signInDashboard(s, s.keys.read_write);
  const reader = await signInDashboard(s, s.keys.read_only);

  const list = await writer.get('/dashboard/feeds');
  t.match(list.text, '<option value="acp">Agentic Commerce Protocol (ACP)</option>');
  const created = await writer.post('/dashboard/feeds', {
    name: 'Agents',
    profile: 'acp',
    format: 'jsonl',
    compression: '',
    status: 'active',
  });
  t.equal(created.status, 303, created.text);
  const page = created.headers.get('location')!;
  const feedId = decodeURIComponent(page.split('/').pop()!);
  const fresh = await writer.get(page);
  t.match(fresh.text, 'Agentic Commerce Protocol (ACP)');
  t.match(fresh.text, 'hosted: channels fetch the export address');

  // No token: refused beside the token field, what was typed kept.
  const delivery = {
    type: 'acp_feed_api',
    url: api.url,
    feed_id: remoteFeed,
    max_drop_percent: '20',
  };
  const refused = await writer.post(`${page}/delivery`, { ...delivery, token: '' });
  t.equal(refused.status, 422);
  t.match(refused.text, /<p class="field-error" id="f-token-error">[^<]*needs credentials: token/);
  t.match(refused.text, `value="${api.url}"`, 'what was typed is kept');
  t.match(refused.text, `value="${remoteFeed}"`);
  const set = await writer.post(`${page}/delivery`, { ...delivery, token: TOKEN });
  t.equal(set.status, 303, set.text);
  const withDelivery = await writer.get(page);
  t.match(textOf(withDelivery.text), `ACP Feed API ${api.url}, feed ${remoteFeed} (token set)`);
  t.match(withDelivery.text, 'token set');
  t.notMatch(withDelivery.text, TOKEN, 'the token is never shown');
  const stored = await s.request('GET', `/v1/feeds/${feedId}`);
  t.match(stored.body.delivery, { type: 'acp_feed_api', feed_id: remoteFeed, max_drop: 0.2 });

  await runFeeds(s);
  const newest = (status: string) =>
    waitFor(async () => {
      const res = await s.request('GET', `/v1/feeds/${feedId}/deliveries`);
      const [last] = res.body.deliveries as { id: string; status: string }[];
      return last?.status === status ? last : undefined;
    });
  await newest('delivered');
  const sent = api.products(remoteFeed).size;
  t.ok(sent > 0, `${sent} products at the Feed API`);
  const history = await reader.get(page);
  const [row] = tableRows(history.text, 'id="deliveries"');
  t.equal(row![1], 'delivered');
  t.equal(row![2], '40');

  // Half the catalogue gone: held, not sent.
  const ids = await s.server.store.db.selectFrom('products').select('id').orderBy('id').execute();
  for (const { id } of ids.slice(0, 20)) {
    const res = await s.request('DELETE', `/v1/products/${encodeURIComponent(id)}`);
    t.equal(res.status, 204);
  }
  await runFeeds(s);
  const held = await newest('held');
  const patches = api.patches.length;
  const heldOnly = await s.request('GET', `/v1/feeds/${feedId}/deliveries?status=held`);
  t.same(
    heldOnly.body.deliveries.map((d: { id: string }) => d.id),
    [held.id],
    'the API lists one state',
  );
  t.equal(heldOnly.body.pagination.total, 1);
  const filtered = await writer.get(`${page}?status=held`);
  t.same(
    tableRows(filtered.text, 'id="deliveries"').map((r) => r[1]),
    ['held'],
  );
  t.match(filtered.text, /<option selected value="held">held<\/option>/);
  const release = `${page}/deliveries/${encodeURIComponent(held.id)}/release`;
  t.match(filtered.text, `action="${release}"`);
  t.notMatch(
    (await reader.get(`${page}?status=held`)).text,
    'Release: send it',
    'a reader cannot release',
  );
  t.equal((await reader.post(release, {})).status, 403);
  const released = await writer.post(release, {});
  t.equal(released.status, 303);
  await newest('delivered');
  t.ok(api.patches.length > patches, 'the released delivery was sent');
  const again = await writer.post(release, {});
  t.equal(again.status, 409, 'only a held delivery is released');

  // The preview names what the channel leaves out, linking to each product.
  const bare = await s.request('POST', '/v1/products', {
    body: productBody({ id: 'no-link', name: 'Unlinked <b>' }),
  });
  t.equal(bare.status, 201);
  const preview = await reader.get(`${page}/preview`);
  t.equal(preview.status, 200, preview.text);
  t.match(preview.text, 'Nothing is written or sent to show this.');
  t.match(preview.text, 'href="/dashboard/products/no-link"');

  // The kept delivery takes only acp in jsonl: refused beside the channel select.
  const channel = formValues(withDelivery.text, `${page}/channel`);
  t.match(channel, { profile: 'acp', format: 'jsonl' });
  const wrong = await writer.post(`${page}/channel`, { ...channel, profile: 'openai' });
  t.equal(wrong.status, 422);
  t.match(wrong.text, /id="c-profile-error">[^<]*acp_feed_api takes an acp feed in jsonl/);
  t.match(wrong.text, '<option selected value="openai">', 'the choice is kept');
  t.equal((await s.request('GET', `/v1/feeds/${feedId}`)).body.profile, 'acp', 'nothing changed');

  // Back to hosted: the delivery and its token are dropped.
  const hosted = await writer.post(`${page}/delivery`, { type: 'hosted' });
  t.equal(hosted.status, 303);
  t.match((await s.request('GET', `/v1/feeds/${feedId}`)).body, {
    delivery: { type: 'hosted' },
    credentials_set: false,
  });
});

t.test(
  "a Stripe channel set up from the dashboard and imported into Stripe's catalog",
  async (t) => {
    const key = 'sk_test_51DashboardLocalStripe';
    const stripe = await startStripeServer(t, { key });
    const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' });
    await seedSynthetic(s.server.store.db, { count: 12, brands: 2 });
    const writer = await signInDashboard(s, s.keys.read_write);
    const created = await writer.post('/dashboard/feeds', {
      name: 'Stripe',
      profile: 'stripe',
      format: 'csv',
      compression: '',
      status: 'active',
    });
    t.equal(created.status, 303, created.text);
    const page = created.headers.get('location')!;
    const feedId = decodeURIComponent(page.split('/').pop()!);
    // The form sets the type and mode; api_url stays Stripe's unless the API sets it.
    const viaApi = await s.request('PUT', `/v1/feeds/${feedId}`, {
      body: { delivery: { type: 'stripe', api_url: stripe.url }, credentials: { api_key: key } },
    });
    t.equal(viaApi.status, 200, viaApi.text);
    const form = { type: 'stripe', mode: 'upsert', max_drop_percent: '30' };
    const refused = await writer.post(`${page}/delivery`, { ...form, api_key: 'pk_test_public' });
    t.equal(refused.status, 422);
    t.match(refused.text, /id="f-api_key-error">[^<]*must be a Stripe secret or restricted/);
    t.notMatch(refused.text, 'pk_test_public', 'the key typed is not written back');
    const set = await writer.post(`${page}/delivery`, { ...form, api_key: key });
    t.equal(set.status, 303, set.text);
    const shown = await writer.get(page);
    t.match(
      textOf(shown.text),
      "Stripe's product catalog import (upsert) at https://api.stripe.com (key set)",
    );
    t.notMatch(shown.text, key, 'the key is never shown');
    t.match((await s.request('GET', `/v1/feeds/${feedId}`)).body.delivery, {
      type: 'stripe',
      mode: 'upsert',
      max_drop: 0.3,
    });
  },
);
