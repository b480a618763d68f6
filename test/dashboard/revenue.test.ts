import t from 'tap';
import { productBody, startTestServer } from '../support/server.js';
import { signInDashboard } from '../support/dashboard.js';
import { clockAt } from '../support/clock.js';
import { generateReportVia } from '../support/reports.js';

/** Intl writes no-break spaces between amount and sign: read as spaces. */
const spaced = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

t.test('revenue in every currency: the API, the reports and the dashboard', async (t) => {
  const clock = clockAt('2026-11-27T10:00:00Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  for (const [id, price, currency] of [
    ['boot-usd', 179.99, 'USD'],
    ['boot-eur', 59.5, 'EUR'],
  ] as const) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ id, name: `Boot ${currency}`, price, currency }),
    });
    t.equal(res.status, 201, id);
  }
  const conversion = (product_id: string, amount: number, currency: string, minute: number) => ({
    type: 'conversion',
    id: `c-${product_id}-${minute}`,
    product_id,
    occurred_at: `2026-11-26T10:0${minute}:00Z`,
    amount,
    currency,
  });
  const events = await s.request('POST', '/v1/analytics/events', {
    body: {
      events: [
        conversion('boot-usd', 179.99, 'USD', 1),
        conversion('boot-usd', 179.99, 'USD', 2),
        conversion('boot-eur', 59.5, 'EUR', 3),
        conversion('boot-eur', 59.5, 'EUR', 4),
      ],
    },
  });
  t.same(events.body, { received: 4, stored: 4, duplicates: 0 });

  const overview = await s.request('GET', '/v1/analytics');
  t.equal(overview.status, 200);
  const analytics = overview.body.analytics ?? overview.body;
  t.equal(analytics.metrics.revenue, 359.98, 'revenue stays the default currency');
  t.same(analytics.metrics.revenue_by_currency, { EUR: 119, USD: 359.98 });
  const only = await s.request('GET', '/v1/analytics?metric=revenue');
  t.same((only.body.analytics ?? only.body).metrics.revenue_by_currency, { EUR: 119, USD: 359.98 });

  const products = await s.request('GET', '/v1/analytics/products?sort=revenue');
  t.equal(products.status, 200, products.text);
  const byId = new Map<string, any>(products.body.products.map((p: any) => [p.product_id, p]));
  t.same(byId.get('boot-eur').revenue_by_currency, { EUR: 119 }, 'EUR product: its EUR');
  t.same(byId.get('boot-usd').revenue_by_currency, { USD: 359.98 });

  const conversions = await s.request('GET', '/v1/analytics/conversions');
  t.same(conversions.body.revenue_by_currency, { EUR: 119, USD: 359.98 });

  const json = await generateReportVia(s, { type: 'analytics', format: 'json' });
  t.equal(json.status, 'ready');
  const doc = (await s.request('GET', `/v1/reports/${json.id}/download`)).body;
  t.same(doc.revenue_by_currency, { EUR: 119, USD: 359.98 });
  const top = new Map<string, any>(doc.top_products.map((p: any) => [p.id, p]));
  t.same(top.get('boot-eur').revenue_by_currency, { EUR: 119 });
  const html = await generateReportVia(s, { type: 'analytics', format: 'html' });
  const report = (await s.request('GET', `/v1/reports/${html.id}/download`)).text;
  t.match(report, /id="revenue-by-currency">Revenue by currency: 119.00 EUR, 359.98 USD</);

  const admin = await signInDashboard(s, s.keys.read_only);
  const page = spaced((await admin.get('/dashboard/analytics')).text);
  t.match(page, /data-currency="EUR">\s*<div>Revenue \(EUR\)<\/div>\s*<div class="value">€119.00</);
  t.match(
    page,
    /data-currency="USD">\s*<div>Revenue \(USD\)<\/div>\s*<div class="value">\$359.98</,
  );
  // A daily revenue chart per currency sold in: the euros drawn in euros, not as 0 dollars.
  const eurChart = /<figure class="chart" id="chart-revenue-eur"[\s\S]*?<\/figure>/.exec(page)?.[0];
  t.match(eurChart, '<figcaption>Revenue (EUR)</figcaption>');
  t.match(eurChart, 'data-label="2026-11-26" data-value="119"');
  const usdChart = /<figure class="chart" id="chart-revenue"[\s\S]*?<\/figure>/.exec(page)?.[0];
  t.match(usdChart, 'data-label="2026-11-26" data-value="359.98"');
  const row = /<a href="\/dashboard\/products\/boot-eur"[\s\S]*?<\/tr>/.exec(page)?.[0] ?? '';
  t.match(row, '€119.00', 'the EUR product shows its EUR revenue');
  t.notMatch(row, '$0.00', 'never as 0 in the default currency');
  const de = spaced((await admin.get('/dashboard/analytics', { 'accept-language': 'de' })).text);
  t.match(de, '<div class="value">119,00 €</div>');
});
