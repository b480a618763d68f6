import t from 'tap';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { csvRows, safeCsvCell } from '../../src/reports/csv.js';
import { escapeHtml } from '../../src/markup.js';
import { niceScale, renderBarChart, renderLineChart } from '../../src/reports/charts.js';
import { recordEvents } from '../../src/domain/analytics/interactions.js';
import { generateReport } from '../../src/reports/generate.js';
import { analyticsReportSources } from '../../src/domain/reports/analytics-source.js';
import { findReportById } from '../../src/db/queries/reports.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';
import { generateReportVia, HOSTILE_NAMES } from '../support/reports.js';
import { createFeed, runFeeds } from '../support/feeds.js';
import { unescapeHtml } from '../support/html.js';

const FORMULA_START = ['=', '+', '-', '@', '\t', '\r', '＝', '＋', '－', '＠'];

async function download(s: TestServer, id: string): Promise<string> {
  const res = await s.request('GET', `/v1/reports/${id}/download`);
  if (res.status !== 200) throw new Error(`download: ${res.status} ${res.text}`);
  return res.text;
}

t.test('a CSV text cell that could start a formula is prefixed with an apostrophe', async (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme' }), (value) => {
      const cell = (parse(csvRows([[value]])) as string[][])[0]?.[0] ?? '';
      const dangerous = FORMULA_START.some((c) => value.startsWith(c));
      return cell === (dangerous ? `'${value}` : value);
    }),
    { numRuns: 500 },
  );
  const cases: [string, string][] = [
    ['=1+1', "'=1+1"],
    ['+49 30 1234', "'+49 30 1234"],
    ['-2', "'-2"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=cmd', "'\t=cmd"],
    ['\r=cmd', "'\r=cmd"],
    ['＝1+1', "'＝1+1"],
    ['a=1', 'a=1'],
    ["'already", "'already"],
    ['', ''],
  ];
  for (const [input, output] of cases) t.equal(safeCsvCell(input), output, JSON.stringify(input));
  t.equal(csvRows([[-5, 0.25, null]]), '-5,0.25,\n', 'numbers we compute stay numbers');
});

t.test('escapeHtml leaves no markup character and loses nothing', async (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme' }), (value) => {
      const escaped = escapeHtml(value);
      return !/[<>"']/.test(escaped) && unescapeHtml(escaped) === value;
    }),
    { numRuns: 500 },
  );
  t.equal(
    escapeHtml('<a href="x">O\'Brien & co</a>'),
    '&lt;a href=&quot;x&quot;&gt;O&#39;Brien &amp; co&lt;/a&gt;',
  );
});

t.test('charts draw one element per point, with escaped labels', async (t) => {
  const labels = ['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04', '2026-11-05'];
  const line = renderLineChart({
    title: 'Interactions <by kind>',
    labels,
    series: [
      { name: 'assistant', values: [1, 2, 3, 4, 5] },
      { name: '<script>x</script>', values: [0, 0, 0, 0, 0] },
      { name: 'training', values: [9, 0, 1, 0, 2] },
    ],
  }).value;
  t.equal(line.match(/<circle [^>]*class="point"/g)?.length, 15);
  t.notMatch(line, /<script>/);
  t.match(line, /data-series="&lt;script&gt;x&lt;\/script&gt;"/);
  t.match(line, /aria-label="Interactions &lt;by kind&gt;"/);
  t.match(line, /data-label="2026-11-03" data-value="3"/);
  const bars = renderBarChart({
    title: 'Conversions',
    labels,
    series: [{ name: 'conversions', values: [0, 1, 0, 7, 2] }],
  }).value;
  t.equal(bars.match(/<rect [^>]*class="point"/g)?.length, 5);
  const empty = renderBarChart({
    title: 'Nothing',
    labels,
    series: [{ name: 'revenue', values: [0, 0, 0, 0, 0] }],
  }).value;
  t.equal(empty.match(/class="point"/g)?.length, 5, 'a period without data still has its points');
  t.throws(
    () => renderLineChart({ title: 'x', labels, series: [{ name: 's', values: [1] }] }),
    /series 's' has 1 values for 5 labels/,
  );
  fc.assert(
    fc.property(fc.double({ min: 0.001, max: 1e12, noNaN: true }), (max) => {
      const scale = niceScale(max);
      const steps = scale.max / scale.step;
      return scale.max >= max && Math.abs(steps - Math.round(steps)) < 1e-6 && steps <= 5;
    }),
  );
});

t.test('the products report carries every product, escaped, in CSV, JSON and HTML', async (t) => {
  const s = await startTestServer(t);
  const ids: string[] = [];
  for (const [i, name] of HOSTILE_NAMES.entries()) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({ id: `P-${i}`, name, attributes: { brand: name.slice(0, 70) } }),
    });
    t.equal(res.status, 201, name);
    ids.push(res.body.id);
  }
  const csv = await download(
    s,
    (await generateReportVia(s, { type: 'products', format: 'csv' })).id,
  );
  const rows = parse(csv, { columns: true }) as Record<string, string>[];
  t.same(
    rows.map((r) => r.id),
    ids,
  );
  for (const [i, name] of HOSTILE_NAMES.entries()) {
    const dangerous = FORMULA_START.some((c) => name.startsWith(c));
    t.equal(rows[i]!.name, dangerous ? `'${name}` : name, `csv ${JSON.stringify(name)}`);
  }
  const json = JSON.parse(
    await download(s, (await generateReportVia(s, { type: 'products', format: 'json' })).id),
  );
  t.same(
    json.products.map((p: any) => p.name),
    HOSTILE_NAMES,
  );
  t.match(json.report, { type: 'products', store: 'My Store' });
  const html = await download(
    s,
    (await generateReportVia(s, { type: 'products', format: 'html' })).id,
  );
  t.notMatch(html, /<script/i, 'no script element, not even from a product name');
  t.notMatch(html, /<img/i);
  t.match(html, '&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;');
  t.match(html, '<bdi>حذاء الجري السريع</bdi>');
  t.match(html, 'Emoji 👟🔥 trail shoe');
  t.equal(
    html.match(/<tr>/g)?.length,
    HOSTILE_NAMES.length + 1,
    'a header row and a row per product',
  );
});

t.test(
  'the products report reads the catalogue a page at a time, with analytics per product',
  async (t) => {
    const s = await startTestServer(t);
    for (let i = 0; i < 11; i++) {
      const res = await s.request('POST', '/v1/products', {
        body: productBody({ id: `SKU-${String(i).padStart(2, '0')}`, name: `Product ${i}` }),
      });
      t.equal(res.status, 201);
    }
    await recordEvents(s.server.store.db, [
      {
        type: 'view',
        product_id: 'SKU-03',
        occurred_at: new Date('2026-11-02T10:00:00Z'),
        agent: 'ChatGPT-User',
      },
      {
        type: 'view',
        product_id: 'SKU-03',
        occurred_at: new Date('2026-11-02T11:00:00Z'),
        agent: 'ChatGPT-User',
      },
      {
        type: 'click',
        product_id: 'SKU-03',
        occurred_at: new Date('2026-11-03T11:00:00Z'),
        agent: 'ChatGPT-User',
      },
      {
        type: 'conversion',
        product_id: 'SKU-03',
        occurred_at: new Date('2026-11-03T12:00:00Z'),
        amount_minor: 7999,
        currency: 'USD',
      },
      {
        type: 'view',
        product_id: 'SKU-10',
        occurred_at: new Date('2026-10-31T23:59:59Z'),
        agent: 'GPTBot',
      },
    ]);
    const created = await s.request('POST', '/v1/reports', {
      body: { type: 'products', format: 'json', start_date: '2026-11-01', end_date: '2026-11-07' },
    });
    const row = (await findReportById(s.server.store.db, created.body.id))!;
    let text = '';
    let pages = 0;
    const sources = analyticsReportSources({ currency: 'USD', storeName: 'My Store' });
    await generateReport(
      row,
      { write: async (chunk) => void (text += chunk) },
      {
        db: s.server.store.db,
        sources: {
          ...sources,
          productAnalytics: (db, period, ids) => {
            pages++;
            t.ok(ids.length <= 3, 'never more than a page of products at once');
            return sources.productAnalytics(db, period, ids);
          },
        },
        storeName: 'My Store',
        currency: 'USD',
        now: new Date('2026-11-08T00:00:00Z'),
        pageSize: 3,
      },
    );
    t.equal(pages, 4, '11 products in pages of 3');
    const json = JSON.parse(text);
    t.same(
      json.products.map((p: any) => p.id),
      Array.from({ length: 11 }, (_, i) => `SKU-${String(i).padStart(2, '0')}`),
    );
    t.match(json.products[3], {
      interactions: 3,
      views: 2,
      clicks: 1,
      conversions: 1,
      revenue: 79.99,
    });
    t.match(
      json.products[10],
      { interactions: 0, views: 0, revenue: 0 },
      'the view before the period is not counted',
    );
    t.match(json.products[0], { interactions: 0, conversions: 0 });
  },
);

t.test(
  'the analytics report shows the overview, every day of the period, top products and agents',
  async (t) => {
    const s = await startTestServer(t);
    for (const [id, name] of [
      ['A', '<b>Alpha</b>'],
      ['B', 'Beta'],
    ]) {
      t.equal(
        (await s.request('POST', '/v1/products', { body: productBody({ id, name }) })).status,
        201,
      );
    }
    await recordEvents(s.server.store.db, [
      {
        type: 'view',
        product_id: 'A',
        occurred_at: new Date('2026-11-02T10:00:00Z'),
        agent: 'ChatGPT-User',
      },
      {
        type: 'view',
        product_id: 'A',
        occurred_at: new Date('2026-11-02T10:05:00Z'),
        agent: 'ChatGPT-User',
      },
      {
        type: 'view',
        product_id: 'A',
        occurred_at: new Date('2026-11-02T10:06:00Z'),
        agent: 'ChatGPT-User',
      },
      {
        type: 'view',
        product_id: 'B',
        occurred_at: new Date('2026-11-05T08:00:00Z'),
        agent: 'GPTBot',
      },
      {
        type: 'conversion',
        product_id: 'A',
        occurred_at: new Date('2026-11-03T09:00:00Z'),
        amount_minor: 1000,
        currency: 'USD',
      },
      {
        type: 'conversion',
        product_id: 'A',
        occurred_at: new Date('2026-11-03T09:30:00Z'),
        amount_minor: 500,
        currency: 'EUR',
      },
    ]);
    const period = { start_date: '2026-11-01', end_date: '2026-11-07' };
    const json = JSON.parse(
      await download(
        s,
        (await generateReportVia(s, { type: 'analytics', format: 'json', ...period })).id,
      ),
    );
    t.same(json.report.period, { start: '2026-11-01', end: '2026-11-07' });
    t.equal(json.daily.length, 7);
    t.same(json.daily[1], {
      date: '2026-11-02',
      interactions: { assistant: 3, search: 0, training: 0, agent: 0 },
      conversions: 0,
      revenue: 0,
    });
    t.same(json.daily[2], {
      date: '2026-11-03',
      interactions: { assistant: 0, search: 0, training: 0, agent: 0 },
      conversions: 2,
      revenue: 10,
    });
    t.equal(json.daily[4].interactions.training, 1);
    t.match(json.metrics, {
      total_products: { value: 2 },
      ai_interactions: { value: 4, daily_average: 0.571429, growth_rate: null },
      discovery_rate: { value: 1 },
      conversion_rate: { value: 0.5 },
      revenue: { value: 10 },
    });
    t.same(json.other_currencies, [{ currency: 'EUR', conversions: 1, amount: 5 }]);
    t.same(
      json.top_products.map((p: any) => [p.id, p.name, p.interactions]),
      [
        ['A', '<b>Alpha</b>', 3],
        ['B', 'Beta', 1],
      ],
    );
    t.same(
      json.top_agents.map((a: any) => [a.agent, a.kind, a.interactions]),
      [
        ['ChatGPT-User', 'assistant', 3],
        ['GPTBot', 'training', 1],
      ],
    );

    const csv = await download(
      s,
      (await generateReportVia(s, { type: 'analytics', format: 'csv', ...period })).id,
    );
    t.equal(csv.split('\n\n').length, 4, 'four sections separated by an empty line');
    const lines = csv.split(/\r?\n/);
    const dailyHeader = lines.indexOf(
      'date,assistant_interactions,search_interactions,training_interactions,agent_interactions,conversions,revenue_USD',
    );
    t.ok(dailyHeader > 0);
    t.same(
      lines.slice(dailyHeader + 1, dailyHeader + 8).map((l) => l.slice(0, 10)),
      [
        '2026-11-01',
        '2026-11-02',
        '2026-11-03',
        '2026-11-04',
        '2026-11-05',
        '2026-11-06',
        '2026-11-07',
      ],
    );
    t.equal(lines[dailyHeader + 3], '2026-11-03,0,0,0,0,2,10.00');
    t.ok(lines.includes('A,<b>Alpha</b>,3,3,0,2,10.00'));
    t.ok(lines.includes('revenue,10.00,,'));
    t.ok(lines.includes('revenue_EUR,5.00,,'), 'other currencies on rows of their own');

    const html = await download(
      s,
      (await generateReportVia(s, { type: 'analytics', format: 'html', ...period })).id,
    );
    t.equal(
      html.match(/<circle [^>]*class="point"/g)?.length,
      4 * 7,
      'a point per day and agent kind',
    );
    t.equal(
      html.match(/<rect [^>]*class="point"/g)?.length,
      2 * 7,
      'a bar per day for conversions and revenue',
    );
    t.match(html, '&lt;b&gt;Alpha&lt;/b&gt;');
    t.match(
      html,
      'Conversions in other currencies, not in the revenue above: 5.00 EUR (1 conversions)',
    );
  },
);

t.test('the feed diagnostics report lists each feed with its issues', async (t) => {
  const s = await startTestServer(t);
  t.equal(
    (
      await s.request('POST', '/v1/products', {
        body: productBody({ id: 'X1', name: '=cmd|calc' }),
      })
    ).status,
    201,
  );
  const feed = await createFeed(s, { name: '@Everything', format: 'csv' });
  const unpublished = await createFeed(s, { name: 'Later', format: 'json' });
  await runFeeds(s);
  await s.request('PUT', `/v1/feeds/${unpublished.id}`, { body: { status: 'inactive' } });
  const json = JSON.parse(
    await download(
      s,
      (await generateReportVia(s, { type: 'feed_diagnostics', format: 'json' })).id,
    ),
  );
  t.equal(json.report.period, null);
  t.same(
    json.feeds.map((f: any) => f.id),
    [feed.id, unpublished.id],
  );
  const issues = json.feeds[0].diagnostics.issues;
  t.ok(issues.length > 0, 'the demo product misses fields a feed wants');
  const csv = await download(
    s,
    (await generateReportVia(s, { type: 'feed_diagnostics', format: 'csv' })).id,
  );
  const rows = parse(csv, { columns: true }) as Record<string, string>[];
  const first = rows.filter((r) => r.feed_id === feed.id);
  t.equal(first.length, issues.length, 'a row per issue');
  t.equal(first[0]!.feed_name, "'@Everything");
  t.same(
    first.map((r) => r.issue_code),
    issues.map((i: any) => i.code),
  );
  const html = await download(
    s,
    (await generateReportVia(s, { type: 'feed_diagnostics', format: 'html' })).id,
  );
  t.match(html, '<h2><bdi>@Everything</bdi>: issues</h2>');
  t.equal(html.match(/<h2>/g)?.length, 3, 'the feed table and an issue table per feed');
});

t.test('a chart of counts steps by whole numbers', async (t) => {
  t.same(niceScale(1, true), { max: 1, step: 1 });
  t.same(niceScale(3, true), { max: 3, step: 1 });
  t.same(niceScale(0, true), { max: 1, step: 1 });
  t.same(niceScale(1), { max: 1, step: 0.5 });
  const bars = renderBarChart({
    title: 'Conversions',
    labels: ['2026-11-01', '2026-11-02'],
    series: [{ name: 'conversions', values: [1, 0] }],
    integer: true,
  }).value;
  t.same(
    [...bars.matchAll(/class="y-tick"[^>]*>([^<]*)</g)].map((m) => m[1]),
    ['0', '1'],
  );
});
