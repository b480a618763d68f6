// stores: sqlite-only — a browser test: axe-core checks the pages' markup and styles in Chromium;
//   what the pages read goes through the domain and queries that the API and dashboard tests run
//   on both stores
import { createRequire } from 'node:module';
import t from 'tap';
import { launchChromium, standInImageHost } from '../support/chromium.js';
import { runFeeds } from '../support/feeds.js';
import { seedDemo } from '../../src/seed/demo.js';
import { startTestServer } from '../support/server.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string }[];
}

/**
 * Issue 27, checked by a tool we did not write: axe-core on every dashboard page at 360 and
 * 1280 px finds no violation of impact serious or critical; no page scrolls sideways at 360 px;
 * no page logs a console error.
 */
t.test('axe-core finds nothing serious on any dashboard page, at 360 and 1280 px', async (t) => {
  const s = await startTestServer(t, { ALLOW_PRIVATE_TARGETS: 'true' });
  await seedDemo(s.server.store.db, { currency: s.config.DEFAULT_CURRENCY });
  const made = await Promise.all([
    s.request('POST', '/v1/feeds', { body: { name: 'Axe feed', format: 'json' } }),
    s.request('POST', '/v1/integrations', {
      body: { platform: 'feed', settings: { url: 'http://127.0.0.1:9/products.jsonl' } },
    }),
    s.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hook' } }),
  ]);
  for (const res of made) t.equal(res.status, 201, res.text);
  const [feedId, integrationId, hookId] = made.map((res) => res.body.id as string);
  // The feed generated, so its diagnostics and a problem's page are there to check.
  await runFeeds(s);
  const [issue] = (await s.request('GET', `/v1/feeds/${feedId}`)).body.diagnostics.issues;
  t.ok(issue, 'the demo catalogue has a feed problem to show');

  const browser = await launchChromium(t);
  if (!browser) return;
  // axe-core is injected as an inline <script> (addScriptTag({ path }) inlines the file), which
  // the dashboard's CSP forbids, as it should: this context, for the axe run only, bypasses the
  // CSP. test/dashboard/browser.test.ts and security.test.ts check the CSP itself.
  const context = await browser.newContext({ bypassCSP: true });
  await standInImageHost(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`${page.url()}: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`${page.url()}: ${m.text()}`);
  });

  const pages: string[] = [
    '/dashboard/products',
    '/dashboard/products?category=none-such',
    '/dashboard/products/GIFT-25',
    '/dashboard/products/new',
    '/dashboard/feeds',
    `/dashboard/feeds/${feedId}`,
    `/dashboard/feeds/${feedId}/preview`,
    `/dashboard/feeds/${feedId}/problems?code=${encodeURIComponent(issue.code)}`,
    '/dashboard/integrations',
    `/dashboard/integrations/${integrationId}`,
    '/dashboard/webhooks',
    `/dashboard/webhooks/${hookId}`,
    '/dashboard/analytics',
    '/dashboard/discovery',
    '/dashboard/settings/api-keys',
  ];
  let charts = 0;
  const check = async (where: string, width: number) => {
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate<AxeViolation[]>(
      `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`,
    );
    const serious = violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => `${n.target.join(' ')} ${n.html.slice(0, 80)}`).join(', ')}`,
      );
    t.same(serious, [], `${where} at ${width} px: no serious or critical axe violation`);
    if (width > 360) return;
    const { scroll, client } = await page.evaluate<{ scroll: number; client: number }>(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
    );
    t.ok(scroll <= client, `${where} at 360 px: no horizontal scroll (${scroll} <= ${client})`);
    // Charts stay readable: each drawn at least at its own size (its 11-unit text at least 11
    // px), scrolling inside its figure rather than shrinking to the screen.
    const scales = await page.evaluate<number[]>(
      `[...document.querySelectorAll('figure.chart svg')].map((e) => e.getBoundingClientRect().width / e.viewBox.baseVal.width)`,
    );
    charts += scales.length;
    for (const scale of scales) t.ok(scale >= 1, `${where} at 360 px: a chart drawn at ${scale}x`);
  };

  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    await context.clearCookies();
    await page.goto(`${s.url}/dashboard/sign-in`);
    await check('/dashboard/sign-in', width);
    await page.getByLabel('API key').fill(s.keys.admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard\/products$/);
    for (const p of pages) {
      const res = await page.goto(s.url + p);
      t.equal(res?.status(), 200, `${p} answers`);
      await check(p, width);
    }
  }
  // Interactions, conversions, and a revenue chart per currency the demo sells in.
  t.ok(charts >= 3, `the analytics page's ${charts} charts measured at 360 px`);
  t.same(problems, [], 'no console error, no script error');
});
