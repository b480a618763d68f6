import t from 'tap';
import { signInDashboard } from '../support/dashboard.js';
import { createFeed, runFeeds, waitFor } from '../support/feeds.js';
import { tableRows } from '../support/html.js';
import { startReceiver } from '../support/receiver.js';
import { productBody, startTestServer } from '../support/server.js';

const decode = (href: string) => href.replace(/&amp;/g, '&');

t.test('a feed problem lists its products, with what to do and a link to fix each', async (t) => {
  const s = await startTestServer(t);
  // 55 products without a description, over a page of 50; one named with markup.
  for (let i = 1; i <= 55; i++) {
    const id = `bare-${String(i).padStart(2, '0')}`;
    const res = await s.request('POST', '/v1/products', {
      body: productBody({
        id,
        name: i === 1 ? '<script>alert(1)</script> Boot' : `Boot ${i}`,
        description: null,
      }),
    });
    t.equal(res.status, 201, id);
  }
  await s.request('POST', '/v1/products', {
    body: productBody({ id: 'described', description: 'A boot with a description' }),
  });
  const feed = await createFeed(s, { name: 'All', format: 'csv' });
  await runFeeds(s);

  const dash = await signInDashboard(s, s.keys.read_only);
  const writer = await signInDashboard(s, s.keys.read_write);
  const form = (await writer.get('/dashboard/feeds')).text;
  const statuses = /<select id="f-status" name="status"[^>]*>([\s\S]*?)<\/select>/.exec(form)?.[1];
  t.match(statuses, '<option selected value="active">active</option>', 'active by default');
  t.notMatch(statuses, '(any)', 'no "(any)" that would mean active only');
  const feedPage = await dash.get(`/dashboard/feeds/${feed.id}`);
  t.equal(feedPage.status, 200);
  t.match(feedPage.text, '<th scope="col">What to do</th>');
  const link = /href="(\/dashboard\/feeds\/[^"]+\/problems\?code=description\.missing)"/.exec(
    feedPage.text,
  )?.[1];
  t.ok(link, 'the problem links to its products');
  const [row] = tableRows(feedPage.text).filter((r) => r[0] === 'description');
  t.same(row!.slice(0, 4), ['description', 'missing', 'error', '55']);
  t.match(row![4], /^no description: see which products and fix them$/);

  const first = await dash.get(decode(link!));
  t.equal(first.status, 200, first.text);
  const listed = tableRows(first.text);
  t.equal(listed.length, 50, 'a page of 50');
  t.same(listed[0], [
    'bare-01',
    '&lt;script&gt;alert(1)&lt;/script&gt; Boot',
    'active',
    'included',
  ]);
  t.notMatch(first.text, '<script>alert(1)', 'names are escaped');
  t.match(first.text, 'href="/dashboard/products/bare-01"', 'each product links to its page');
  t.match(first.text, /1–50 of 55/);
  const next = /href="([^"]+offset=50)">Next</.exec(first.text)?.[1];
  t.ok(next, 'a next page');
  const second = await dash.get(decode(next!));
  t.same(
    tableRows(second.text).map((r) => r[0]),
    ['bare-51', 'bare-52', 'bare-53', 'bare-54', 'bare-55'],
  );
  t.match(second.text, /51–55 of 55/);
  t.match(second.text, />Previous</);
  t.notMatch(second.text, />Next</);

  // Fixed where it is shown: the next generation counts one product fewer.
  const fixed = await s.request('PUT', '/v1/products/bare-01', {
    body: { description: 'Now described' },
  });
  t.equal(fixed.status, 200);
  await runFeeds(s);
  const after = await dash.get(decode(link!));
  t.notMatch(after.text, 'href="/dashboard/products/bare-01"');
  t.match(after.text, /1–50 of 54/);

  const unknown = await dash.get(`/dashboard/feeds/${feed.id}/problems?code=title.nonsense`);
  t.equal(unknown.status, 404);
  t.match(unknown.text, 'No problem &#39;title.nonsense&#39; in the last generation');
});

t.test("an endpoint's deliveries are paged and filtered by state and event", async (t) => {
  const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' });
  const receiver = await startReceiver(t);
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  t.equal(hook.status, 201);
  for (let i = 1; i <= 28; i++) {
    await s.request('POST', '/v1/products', { body: productBody({ id: `p${i}` }) });
  }
  await s.request('PUT', '/v1/products/p1', { body: { name: 'Renamed' } });
  await s.request('PUT', '/v1/products/p2', { body: { name: 'Renamed' } });
  await receiver.waitFor(30);
  await waitFor(
    async () => {
      const res = await s.request(
        'GET',
        `/v1/webhooks/${hook.body.id}/deliveries?status=succeeded`,
      );
      return res.body.pagination.total === 30;
    },
    30_000,
    'every delivery recorded as succeeded',
  );

  const dash = await signInDashboard(s, s.keys.read_only);
  const base = `/dashboard/webhooks/${hook.body.id}`;
  const first = await dash.get(base);
  t.equal(first.status, 200, first.text);
  t.equal(tableRows(first.text).length, 25, 'a page of 25');
  t.match(first.text, /1–25 of 30/);
  const next = /href="([^"]+)">Next</.exec(first.text)?.[1];
  t.equal(decode(next!), `${base}?offset=25`);
  const second = await dash.get(decode(next!));
  t.equal(tableRows(second.text).length, 5);
  t.match(second.text, /26–30 of 30/);
  t.match(second.text, `href="${base}">Previous<`);

  const updated = await dash.get(`${base}?status=&event=product.updated`);
  t.equal(updated.status, 200, updated.text);
  const rows = tableRows(updated.text);
  t.same(
    rows.map((r) => [r[0]!.split(' ')[0], r[1]]),
    [
      ['product.updated', 'succeeded'],
      ['product.updated', 'succeeded'],
    ],
  );
  t.match(updated.text, /<option selected value="product\.updated">/, 'the filter is kept');
  t.match(updated.text, /1–2 of 2/);
  t.notMatch(updated.text, />Next</);

  const none = await dash.get(`${base}?status=failed`);
  t.match(none.text, 'No delivery matches these filters.');
  const bad = await dash.get(`${base}?status=lost`);
  t.equal(bad.status, 400);
  t.match(bad.text, 'status');
});

t.test("an integration's sync history is paged", async (t) => {
  const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' });
  const created = await s.request('POST', '/v1/integrations', {
    body: { platform: 'feed', settings: { url: 'http://127.0.0.1:9/feed.csv' } },
  });
  t.equal(created.status, 201, created.text);
  const id = created.body.id;
  // 23 finished syncs, written as the runner records them (no source to sync from here).
  for (let i = 0; i < 23; i++) {
    const at = new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString();
    await s.server.store.db
      .insertInto('sync_runs')
      .values({
        id: `sync_${String(i).padStart(2, '0')}`,
        integration_id: id,
        status: 'succeeded',
        trigger: 'manual',
        started_at: at,
        finished_at: at,
        duration_ms: 10,
        fetched: i,
        errors: '[]',
        error: null,
        owner: 'test',
        pid: process.pid,
        hostname: 'test',
        heartbeat_ms: 0,
      })
      .execute();
  }
  const dash = await signInDashboard(s, s.keys.read_only);
  const first = await dash.get(`/dashboard/integrations/${id}`);
  t.equal(first.status, 200, first.text);
  t.equal(tableRows(first.text).length, 20, 'a page of 20');
  t.match(first.text, /1–20 of 23/);
  const next = /href="([^"]+)">Next</.exec(first.text)?.[1];
  t.equal(decode(next!), `/dashboard/integrations/${id}?offset=20#syncs`);
  const second = await dash.get(decode(next!));
  t.equal(tableRows(second.text).length, 3);
  t.match(second.text, /21–23 of 23/);
  t.match(second.text, `href="/dashboard/integrations/${id}#syncs">Previous<`);
  t.notMatch(second.text, />Next</);
});
