// stores: sqlite-only — a browser test: headless Chromium opens the HTML report; the report's data
//   comes from the queries test/reports/api.test.ts runs on both stores
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { recordEvents, type AnalyticsEvent } from '../../src/domain/analytics/interactions.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';
import { generateReportVia, HOSTILE_NAMES } from '../support/reports.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../support/chromium.js';

/** Screenshots and the PDF land here, kept after the run for a person to look at. */
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/reports/', import.meta.url));

const START = '2026-11-01';
const DAYS = 14;
const AGENTS = ['ChatGPT-User', 'OAI-SearchBot', 'GPTBot', 'acme-shopping-agent'];

function dayOf(i: number): string {
  return new Date(Date.parse(`${START}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10);
}

async function launch(t: Test): Promise<BrowserContext | undefined> {
  if (!fs.existsSync(CHROMIUM)) {
    t.fail(
      `Chromium is missing at ${CHROMIUM}: install Debian's package (as root: apt-get install -y chromium; .ci/run does it) to run the HTML report's browser test.`,
    );
    return undefined;
  }
  const context = await chromium.launchPersistentContext(t.testdir({}), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1100, height: 900 },
  });
  t.teardown(() => context.close());
  return context;
}

/** Opens a downloaded report from disk and records every request the page makes. */
async function openReport(context: BrowserContext, file: string) {
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => errors.push(`console ${m.type()}: ${m.text()}`));
  const url = pathToFileURL(file).href;
  await page.goto(url, { waitUntil: 'load' });
  return { page, requests, errors, url };
}

async function saveDownload(s: TestServer, id: string, name: string): Promise<string> {
  const res = await fetch(`${s.url}/v1/reports/${id}/download`, {
    headers: { authorization: `Bearer ${s.keys.read_only}` },
  });
  if (res.status !== 200) throw new Error(`download: ${res.status}`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return file;
}

async function pointsOf(page: Page, chart: string) {
  return page.$$eval(`#${chart} svg .point`, (els) =>
    els.map((e) => ({
      series: e.getAttribute('data-series'),
      label: e.getAttribute('data-label'),
      value: Number(e.getAttribute('data-value')),
    })),
  );
}

t.test(
  'the HTML analytics report opens in Chromium: charts with a point per day, no request, no script',
  { timeout: 180_000 },
  async (t) => {
    const s = await startTestServer(t);
    for (const [i, name] of HOSTILE_NAMES.entries()) {
      const res = await s.request('POST', '/v1/products', {
        body: productBody({ id: `P-${i}`, name }),
      });
      t.equal(res.status, 201);
    }
    // A plausible two weeks: each agent kind views products, some conversions, one foreign one.
    const events: AnalyticsEvent[] = [];
    for (let d = 0; d < DAYS; d++) {
      AGENTS.forEach((agent, k) => {
        for (let n = 0; n < ((d * (k + 2)) % 7) + k; n++) {
          events.push({
            type: n % 3 === 2 ? 'click' : 'view',
            product_id: `P-${(d + n + k) % HOSTILE_NAMES.length}`,
            occurred_at: new Date(`${dayOf(d)}T${String(8 + n).padStart(2, '0')}:00:00Z`),
            agent,
          });
        }
      });
      if (d % 3 !== 1) {
        events.push({
          type: 'conversion',
          product_id: `P-${d % HOSTILE_NAMES.length}`,
          occurred_at: new Date(`${dayOf(d)}T20:00:00Z`),
          agent: 'ChatGPT-User',
          amount_minor: 1999 + d * 250,
          currency: 'USD',
        });
      }
    }
    await recordEvents(s.server.store.db, events);
    const report = await generateReportVia(s, {
      type: 'analytics',
      format: 'html',
      start_date: START,
      end_date: dayOf(DAYS - 1),
    });
    t.equal(report.status, 'ready');
    const file = await saveDownload(s, report.id, 'analytics-report.html');

    const context = await launch(t);
    if (!context) return;
    const { page, requests, errors, url } = await openReport(context, file);
    t.same(requests, [url], 'the only request is the document itself');
    t.same(errors, [], 'no error and no console output');
    t.equal(await page.locator('script').count(), 0);
    t.equal(await page.title(), 'AI agent analytics: My Store', 'no product name ran as script');

    const days = Array.from({ length: DAYS }, (_, i) => dayOf(i));
    const interactions = await pointsOf(page, 'chart-interactions');
    t.equal(interactions.length, 4 * DAYS, 'a point per day and agent kind');
    for (const kind of ['assistant', 'search', 'training', 'agent']) {
      t.same(
        interactions.filter((p) => p.series === kind).map((p) => p.label),
        days,
        `${kind}: one point per day, in order`,
      );
    }
    const assistantTotal = interactions
      .filter((p) => p.series === 'assistant')
      .reduce((sum, p) => sum + p.value, 0);
    t.equal(
      assistantTotal,
      events.filter((e) => e.agent === 'ChatGPT-User' && e.type !== 'conversion').length,
      'the assistant line adds up to the assistant interactions recorded',
    );
    const conversions = await pointsOf(page, 'chart-conversions');
    t.same(
      conversions.map((p) => p.label),
      days,
    );
    t.equal(
      conversions.reduce((sum, p) => sum + p.value, 0),
      events.filter((e) => e.type === 'conversion').length,
    );
    const revenue = await pointsOf(page, 'chart-revenue');
    t.same(
      revenue.map((p) => p.label),
      days,
    );
    t.equal(revenue[0]!.value, 19.99);
    t.equal(revenue[1]!.value, 0);

    const axisLabels = await page.$$eval('#chart-interactions svg .x-tick', (els) =>
      els.map((e) => e.textContent),
    );
    t.ok(axisLabels.length >= 2 && axisLabels[0] === START, 'the x axis is labelled with days');
    t.equal(await page.locator('#chart-revenue svg .y-label').textContent(), 'Revenue (USD)');

    const productCells = await page.$$eval('table', (tables) =>
      [...tables[0]!.querySelectorAll('tbody tr td:first-child > bdi')].map((e) => e.textContent),
    );
    t.ok(
      productCells.length > 0 &&
        productCells.every((n) => (HOSTILE_NAMES as readonly string[]).includes(n!)),
      'top products show the names as text',
    );
    const agentNames = await page.$$eval('table', (tables) =>
      [...tables[1]!.querySelectorAll('tbody tr td:first-child')].map((e) => e.textContent),
    );
    t.same([...agentNames].sort(), [...AGENTS].sort());

    t.ok(
      await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'),
      'nothing sticks out sideways',
    );
    const shot = path.join(ARTIFACTS, 'analytics-report.png');
    await page.screenshot({ path: shot, fullPage: true });
    t.ok(fs.statSync(shot).size > 10_000, 'a screenshot was taken');
    await page.emulateMedia({ media: 'print' });
    const printed = path.join(ARTIFACTS, 'analytics-report-print.png');
    await page.screenshot({ path: printed, fullPage: true });
    const pdf = path.join(ARTIFACTS, 'analytics-report.pdf');
    await page.pdf({ path: pdf, format: 'A4', printBackground: false });
    t.ok(fs.statSync(pdf).size > 5_000, 'the report prints to PDF');
    t.same(requests, [url], 'printing made no request either');
    t.comment(`report artifacts (HTML, screenshots, PDF): ${ARTIFACTS}`);
  },
);

t.test(
  'the HTML products report with hostile names makes no request in Chromium',
  { timeout: 180_000 },
  async (t) => {
    const s = await startTestServer(t);
    for (const [i, name] of HOSTILE_NAMES.entries()) {
      const res = await s.request('POST', '/v1/products', {
        body: productBody({ id: `P-${i}`, name, images: [`https://img.example.com/${i}.jpg`] }),
      });
      t.equal(res.status, 201);
    }
    const report = await generateReportVia(s, { type: 'products', format: 'html' });
    const file = await saveDownload(s, report.id, 'products-report.html');
    const context = await launch(t);
    if (!context) return;
    const { page, requests, errors, url } = await openReport(context, file);
    t.same(requests, [url], 'the only request is the document itself');
    t.same(errors, []);
    const names = await page.$$eval('tbody tr td:first-child > bdi', (els) =>
      els.map((e) => e.textContent),
    );
    t.same(names, HOSTILE_NAMES, 'every name reads back exactly as stored');
    t.ok(
      await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'),
      'long names wrap: nothing sticks out sideways',
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'products-report.png'), fullPage: true });
    t.comment(`report artifacts: ${ARTIFACTS}`);
  },
);
