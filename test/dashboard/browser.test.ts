// stores: sqlite-only — a browser test: headless Chromium clicks through the dashboard; what its
//   pages read and write goes through the domain and queries that the API and dashboard tests run
//   on both stores
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { Page } from 'playwright-core';
import { launchChromium, pageProblems, standInImageHost } from '../support/chromium.js';
import { seedDemo } from '../../src/seed/demo.js';
import { startTestServer } from '../support/server.js';
import { startFeedServer } from '../support/feed-server.js';
import { feedProduct, jsonl } from '../support/integrations.js';
import { startReceiver } from '../support/receiver.js';

/** Screenshots of every page at 360 px and 1280 px, kept for a person to look at. */
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/dashboard/', import.meta.url));

t.test('the dashboard in a real browser, as a merchant uses it', async (t) => {
  const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true', FEEDS_DEBOUNCE_MS: '0' });
  await seedDemo(s.server.store.db, { currency: s.config.DEFAULT_CURRENCY });
  const feeds = await startFeedServer(t);
  feeds.set('/products.jsonl', jsonl([feedProduct('FEED-1'), feedProduct('FEED-2')]));
  const receiver = await startReceiver(t);

  const browser = await launchChromium(t);
  if (!browser) return;
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
  const images = await standInImageHost(context);
  const page = await context.newPage();
  const problems = pageProblems(page);
  page.on('request', (r) => {
    // A product's https images are previewed from its image host; nothing else leaves.
    if (r.resourceType() === 'image' && /\/dashboard\/products\/[^/]+$/.test(page.url())) return;
    if (!r.url().startsWith(s.url) && !r.url().startsWith('data:'))
      problems.push(`request to ${r.url()}`);
  });
  const go = (p: string) => page.goto(s.url + p);

  // Sign in with the admin key.
  await go('/dashboard');
  t.match(page.url(), /\/dashboard\/sign-in$/, 'signed out: the sign-in page');
  await page.getByLabel('API key').fill(`${s.keys.admin.slice(0, 9)}not-a-key`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  t.match(await page.getByRole('alert').textContent(), /not valid/);
  await page.getByLabel('API key').fill(s.keys.admin);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard\/products$/);
  t.ok(await page.getByRole('link', { name: 'API keys' }).isVisible(), 'signed in');

  // API keys: generate (shown once, copy button), revoke.
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByLabel('Name').fill('Browser key');
  await page.getByLabel('Level').selectOption('read_only');
  await page.getByRole('button', { name: 'Generate key' }).click();
  const secret = (await page.locator('#new-key').textContent())!.trim();
  t.match(secret, /^ask_[a-z]+_\w{40}$/, 'the new key is shown');
  t.ok(await page.getByRole('button', { name: 'Copy key' }).isVisible());
  t.equal((await s.request('GET', '/v1/products', { key: secret })).status, 200, 'the key works');
  await page.getByRole('button', { name: 'Revoke Browser key' }).click();
  t.match(await page.getByRole('status').textContent(), /revoked/);
  t.equal((await s.request('GET', '/v1/products', { key: secret })).status, 401, 'revoked');
  t.notOk((await page.content()).includes(secret), 'never shown again');

  // Products: create with a field error, fix it, edit, delete.
  await go('/dashboard/products');
  await page.getByRole('link', { name: 'Add a product' }).first().click();
  await page.getByLabel('Id (SKU)').fill('BROWSER-1');
  await page.getByLabel('Name').fill('Browser Boot');
  await page.getByLabel('Price').fill('twelve');
  await page.getByRole('button', { name: 'Create product' }).click();
  t.match(
    await page.locator('#f-price-error').textContent(),
    /^price must be/,
    'error beside price',
  );
  t.equal(await page.getByLabel('Name').inputValue(), 'Browser Boot', 'typed values kept');
  await page.getByLabel('Price').fill('129.50');
  await page.getByRole('button', { name: 'Create product' }).click();
  await page.waitForURL(/\/dashboard\/products\/BROWSER-1/);
  t.equal((await s.request('GET', '/v1/products/BROWSER-1')).body.price, 129.5);
  await page.getByLabel('Name').fill('Browser Boot II');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL(/saved=1/);
  t.equal((await s.request('GET', '/v1/products/BROWSER-1')).body.name, 'Browser Boot II');
  await page.getByRole('button', { name: 'Delete product' }).click();
  await page.waitForURL(/deleted=1/);
  t.match(await page.getByRole('status').textContent(), /Product deleted/);
  t.equal(await page.getByRole('alert').count(), 0, 'the list, no error');
  t.equal((await s.request('GET', '/v1/products/BROWSER-1')).status, 404, 'deleted');

  // Feeds: create one, publish, download its export.
  await go('/dashboard/feeds');
  await page.getByLabel('Name').fill('Browser feed');
  await page.getByLabel('Format').selectOption('csv');
  await page.getByRole('button', { name: 'Create feed' }).click();
  await page.waitForURL(/\/dashboard\/feeds\/feed_/);
  const feedUrl = page.url();
  await go('/dashboard/discovery');
  await page.getByRole('button', { name: 'Publish now' }).click();
  t.match(await page.getByRole('status').textContent(), /Publication requested/);
  let ready = false;
  for (const deadline = Date.now() + 60_000; !ready && Date.now() < deadline;) {
    await page.goto(feedUrl);
    ready = await page.getByRole('link', { name: 'Download the export' }).isVisible();
    if (!ready) await page.waitForTimeout(250);
  }
  t.ok(ready, 'the feed was generated');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download the export' }).click(),
  ]);
  const file = await download.path();
  const csv = fs.readFileSync(file, 'utf8');
  t.match(csv.split('\n')[0], /id/, 'a CSV with a header');
  t.ok(csv.split('\n').length > 10, 'with the demo products');
  const [diagnostics] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: /Download every product's issues/ }).click(),
  ]);
  const lines = fs
    .readFileSync(await diagnostics.path(), 'utf8')
    .split('\n')
    .filter(Boolean);
  for (const line of lines) t.ok(JSON.parse(line).id, 'NDJSON of products with issues');
  await page.getByRole('button', { name: 'Deactivate (stop serving it)' }).click();
  await page.getByRole('button', { name: 'Activate' }).waitFor();
  const feedId = feedUrl.split('/').pop()!;
  t.equal((await s.request('GET', `/v1/feeds/${feedId}`)).body.status, 'inactive', 'deactivated');
  // The feed is ready once the run's feeds stage is done; its discovery stage comes after.
  let published = false;
  for (const deadline = Date.now() + 60_000; !published && Date.now() < deadline;) {
    await go('/dashboard/discovery');
    published = (await page.locator('table').count()) > 0;
    if (!published) await page.waitForTimeout(250);
  }
  t.ok(published, 'brands published');
  t.notMatch(await page.content(), /Last published: <strong>never/);

  // Integrations: connect a feed URL, sync, read the history.
  await go('/dashboard/integrations');
  await page.getByLabel('Feed URL', { exact: true }).fill(feeds.url('/products.jsonl'));
  await page.getByRole('button', { name: 'Connect the feed' }).click();
  await page.waitForURL(/\/dashboard\/integrations\/int_/);
  await page.getByRole('button', { name: 'Test the connection' }).click();
  t.match(await page.getByRole('status').first().textContent(), /.+/, 'a test result');
  await page.getByRole('button', { name: 'Sync now' }).click();
  // The page reloads itself (meta refresh) while the sync runs.
  await page.locator('td', { hasText: 'succeeded' }).first().waitFor({ timeout: 20_000 });
  t.match(await page.locator('table').textContent(), /2 fetched: 2 new/);
  const synced = (await s.request('GET', '/v1/integrations')).body.integrations[0];
  t.equal(synced.product_count, 2, 'synced in');
  const integrationPath = new URL(page.url()).pathname;

  // Webhooks: register the receiver, send a test, rotate the secret.
  await go('/dashboard/webhooks');
  await page.getByLabel('Endpoint URL').fill(receiver.url);
  await page.getByRole('button', { name: 'Register endpoint' }).click();
  const hookSecret = (await page.locator('#new-secret').textContent())!.trim();
  t.ok(hookSecret.length > 10, 'the secret shown once');
  await page.getByRole('button', { name: 'Send a test event' }).click();
  await receiver.waitFor(1);
  t.match(await page.getByRole('status').first().textContent(), /Test event sent/);
  t.match(await page.locator('table').textContent(), /test/);
  await page.reload();
  t.notOk((await page.content()).includes(hookSecret), 'not shown after');
  await page.getByRole('button', { name: 'Rotate the secret' }).click();
  const rotated = (await page.locator('#new-secret').textContent())!.trim();
  t.not(rotated, hookSecret, 'a new secret');
  const hookId = (await s.request('GET', '/v1/webhooks')).body.webhooks[0].id as string;

  // Analytics of the demo data: the daily charts have points, some above zero.
  await go('/dashboard/analytics');
  const points = await page.$$eval('#chart-interactions svg .point', (els) =>
    els.map((e) => Number(e.getAttribute('data-value'))),
  );
  t.equal(points.length, 30 * 4, 'thirty days, four agent kinds');
  t.ok(
    points.some((v) => v > 0),
    'demo traffic drawn',
  );
  t.ok((await page.$$('#chart-conversions svg .point')).length === 30);
  t.ok((await page.locator('h2', { hasText: 'Top products' }).count()) === 1);
  await page.getByLabel('Report').selectOption('analytics');
  await page.getByRole('button', { name: 'Generate report' }).click();
  t.match(await page.getByRole('status').first().textContent(), /Report rpt_\w+ requested/);

  // Every page at 360 px and 1280 px: screenshots, and no horizontal scrolling.
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const pages: [string, string][] = [
    ['products', '/dashboard/products'],
    ['product', '/dashboard/products/GIFT-25'],
    ['product-new', '/dashboard/products/new'],
    ['feeds', '/dashboard/feeds'],
    ['feed', new URL(feedUrl).pathname],
    ['integrations', '/dashboard/integrations'],
    ['integration', integrationPath],
    ['webhooks', '/dashboard/webhooks'],
    ['webhook', `/dashboard/webhooks/${hookId}`],
    ['analytics', '/dashboard/analytics'],
    ['discovery', '/dashboard/discovery'],
    ['api-keys', '/dashboard/settings/api-keys'],
  ];
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    for (const [name, p] of pages) {
      await go(p);
      await shot(page, `${name}-${width}.png`);
      const { scroll, inner } = await page.evaluate<{ scroll: number; inner: number }>(
        '({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })',
      );
      t.ok(
        scroll <= inner,
        `${name} at ${width} px: no horizontal overflow (${scroll} <= ${inner})`,
      );
    }
  }
  // Keyboard: the first Tab reaches the skip link, which moves to the content; focus is visible.
  await page.setViewportSize({ width: 1280, height: 800 });
  await go('/dashboard/products');
  await page.keyboard.press('Tab');
  t.equal(await page.evaluate<string>('document.activeElement.textContent'), 'Skip to content');
  const outline = await page.evaluate<string>(
    'getComputedStyle(document.activeElement).outlineStyle',
  );
  t.not(outline, 'none', 'the focused link shows an outline');
  await page.keyboard.press('Enter');
  t.match(page.url(), /#content$/);
  // Every form control has a label.
  for (const [, p] of pages) {
    await go(p);
    const unlabelled = await page.evaluate<string[]>(
      `[...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter((e) => !e.labels || e.labels.length === 0).map((e) => e.name)`,
    );
    t.same(unlabelled, [], `${p}: every field labelled`);
  }

  // Sign out: the session is gone.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/sign-in/);
  await shot(page, 'sign-in-1280.png');
  await go('/dashboard/products');
  t.match(page.url(), /sign-in/, 'signed out');
  t.same(problems, [], 'no script error, no request elsewhere');
  t.ok(
    images.served.some((u) => u.startsWith('https://images.agentshelf.example/demo/')),
    "a product's images previewed from its image host",
  );
  t.comment(`dashboard screenshots: ${ARTIFACTS}`);
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: true });
}
