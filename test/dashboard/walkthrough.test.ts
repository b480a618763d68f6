// stores: sqlite-only — a browser test: headless Chromium clicks through the dashboard; what its
//   pages read and write goes through the domain and queries that the API and dashboard tests run
//   on both stores
/**
 * Issue 27's "done when", in Chromium with only the dashboard, a screenshot at each step
 * (artifacts/dashboard/walkthrough-*.png): connect a feed URL; fix a product a feed diagnostic
 * names and watch the count fall; create a channel and watch its delivery; read revenue in
 * EUR; apply a held sync. The store platform, the ACP Feed API and the shopper's conversions
 * are local stand-ins (test/support/), never the dashboard's own code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { launchChromium, pageProblems, standInImageHost } from '../support/chromium.js';
import { startAcpFeedServer } from '../support/acp-feed-server.js';
import { startFeedServer } from '../support/feed-server.js';
import { feedProduct, jsonl } from '../support/integrations.js';
import { startTestServer } from '../support/server.js';

const ARTIFACTS = fileURLToPath(new URL('../../artifacts/dashboard/', import.meta.url));
const TOKEN = 'acp_walkthrough_token_0123456789';

t.test('a shop run from the dashboard alone: issue 27, step by step', async (t) => {
  // The pipeline runs inside the server, as `serve` runs it: a change is published at once.
  const s = await startTestServer(
    t,
    { ALLOW_PRIVATE_TARGETS: 'true', FEEDS_DEBOUNCE_MS: '0', FEED_DELIVERY_RETRY_SCHEDULE: '0.05' },
    { pipeline: true },
  );
  const shop = await startFeedServer(t);
  const catalogue = ['BOOT-1', 'BOOT-2', 'BOOT-3', 'BOOT-4', 'BOOT-5'].map((id) =>
    feedProduct(id, {
      title: `Trail Boot ${id.slice(-1)}`,
      ...(id === 'BOOT-3' ? { description: '' } : {}),
    }),
  );
  shop.set('/products.jsonl', jsonl(catalogue));
  const acp = await startAcpFeedServer(t, { token: TOKEN });
  const remoteFeed = acp.createFeed('US');

  const browser = await launchChromium(t);
  if (!browser) return;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await standInImageHost(context);
  const page = await context.newPage();
  const problems = pageProblems(page);
  const go = (p: string) => page.goto(s.url + p);
  /** Reloads `url` until `ready` holds (the pipeline and the senders work in the background). */
  const reloadUntil = async (url: string, what: string, ready: () => Promise<boolean>) => {
    for (const deadline = Date.now() + 60_000; ;) {
      await page.goto(url);
      if (await ready()) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} at ${url}`);
      await page.waitForTimeout(200);
    }
  };
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const shot = (name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `walkthrough-${name}.png`), fullPage: true });

  await go('/dashboard/sign-in');
  await page.getByLabel('API key').fill(s.keys.admin);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard\/products$/);

  // 1. Connect a feed URL and sync it in.
  await go('/dashboard/integrations');
  await page.getByLabel('Feed URL', { exact: true }).fill(shop.url('/products.jsonl'));
  await page.getByRole('button', { name: 'Connect the feed' }).click();
  await page.waitForURL(/\/dashboard\/integrations\/int_/);
  const integrationUrl = page.url();
  await page.getByRole('button', { name: 'Sync now' }).click();
  await page.locator('td', { hasText: 'succeeded' }).first().waitFor({ timeout: 30_000 });
  t.match(await page.locator('#syncs ~ .scroll table').textContent(), /5 fetched: 5 new/);
  await shot('1-feed-connected');

  // 2. A feed names a product without a description; fix it there, watch the count fall.
  await go('/dashboard/feeds');
  await page.getByLabel('Name').fill('All products');
  await page.getByLabel('Format').selectOption('csv');
  await page.getByRole('button', { name: 'Create feed' }).click();
  await page.waitForURL(/\/dashboard\/feeds\/feed_/);
  const allFeed = page.url();
  const problem = page.getByRole('link', { name: 'see which products and fix them' });
  await reloadUntil(allFeed, 'the diagnostics', () => problem.first().isVisible());
  await shot('2a-feed-diagnostics');
  await page
    .locator('tr', { hasText: 'no description' })
    .getByRole('link', { name: 'see which products and fix them' })
    .click();
  const named = page.locator('tbody tr', { hasText: 'Trail Boot 3' });
  await named.waitFor();
  t.equal(await page.locator('tbody tr').count(), 1, 'the one product without a description');
  await shot('2b-products-with-the-problem');
  await named.getByRole('link').click();
  await page.getByLabel('Description').fill('A light trail boot, waterproof.');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL(/saved=1/);
  await reloadUntil(
    allFeed,
    'the next generation without the problem',
    async () =>
      (await page.getByText(/products checked/).isVisible()) &&
      (await page.locator('tr', { hasText: 'no description' }).count()) === 0,
  );
  await shot('2c-problem-fixed');

  // 3. A channel: the ACP feed pushed to an ACP Feed API; watch the delivery.
  await go('/dashboard/feeds');
  await page.getByLabel('Name').fill('Agents (ACP)');
  await page.getByLabel('Channel', { exact: true }).selectOption('acp');
  await page.getByLabel('Format').selectOption('jsonl');
  await page.getByRole('button', { name: 'Create feed' }).click();
  await page.waitForURL(/\/dashboard\/feeds\/feed_/);
  const channelFeed = page.url();
  await page.getByText('Send it to an ACP Feed API').click();
  await page.getByLabel('Feed API address').fill(acp.url);
  await page.getByLabel('Feed id at the API').fill(remoteFeed);
  await page.getByLabel('Bearer token').fill(TOKEN);
  await page.getByRole('button', { name: 'Send to the Feed API' }).click();
  await page.waitForURL(channelFeed);
  t.match(await page.locator('dl').textContent(), /ACP Feed API[\s\S]*token set/);
  await reloadUntil(
    channelFeed,
    'a delivered delivery',
    async () =>
      (await page.locator('#deliveries ~ .scroll td', { hasText: 'delivered' }).count()) > 0,
  );
  t.equal(acp.products(remoteFeed).size, 5, 'the five boots at the Feed API');
  await shot('3-channel-delivered');

  // 4. Revenue in EUR: a shopper's conversion reported by the shop, read on Analytics.
  const boot = (await s.request('GET', '/v1/products?limit=250')).body.products.find(
    (p: { name: string }) => p.name === 'Trail Boot 1',
  );
  const events = await s.request('POST', '/v1/analytics/events', {
    body: {
      events: [
        {
          type: 'conversion',
          id: 'order-1001',
          product_id: boot.id,
          occurred_at: new Date(Date.now() - 3_600_000).toISOString(),
          amount: 59.5,
          currency: 'EUR',
        },
      ],
    },
  });
  t.equal(events.body.stored, 1, events.text);
  await go('/dashboard/analytics');
  t.match(
    (await page.locator('main').textContent())!.replace(/[\u00a0\u202f]/g, ' '),
    /€59\.50/,
    'revenue in euros',
  );
  t.equal(
    await page.locator('#chart-revenue-eur figcaption').textContent(),
    'Revenue (EUR)',
    'a daily chart of the euros too',
  );
  await shot('4-revenue-in-eur');

  // 5. The shop's file comes back empty: the sync is held; look, then apply it.
  shop.set('/products.jsonl', '');
  await page.goto(integrationUrl);
  await page.getByRole('button', { name: 'Sync now' }).click();
  await page.locator('#sync-held').waitFor({ timeout: 30_000 });
  t.match(await page.locator('#sync-held').textContent(), /5 inactive/);
  await shot('5a-sync-held');
  await page.getByRole('button', { name: 'Apply it (force a sync)' }).click();
  // The page follows the forced sync (it reloads itself while one runs) until it has ended.
  await page
    .locator('tr', { hasText: 'api (force)' })
    .locator('td', { hasText: 'succeeded' })
    .waitFor({ timeout: 30_000 });
  t.equal(await page.locator('#sync-held').count(), 0, 'nothing held any more');
  const products = (await s.request('GET', '/v1/products?status=active')).body.pagination.total;
  t.equal(products, 0, 'applied: the five boots are inactive');
  await shot('5b-sync-applied');

  t.same(problems, [], 'no script error');
  t.comment(`walkthrough screenshots: ${ARTIFACTS}walkthrough-*.png`);
});
