import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse } from 'csv-parse/sync';
import { productBody, startTestServer } from '../support/server.js';
import { generateReportVia, waitForReport } from '../support/reports.js';
import { clockAt } from '../support/clock.js';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import { temporaryWriter } from '../../src/publish/fs.js';

const NOW = '2026-11-20T15:30:00.000Z';

function reportFile(dir: string, id: string, format: string) {
  return path.join(dir, 'reports', `${id}.${format}`);
}

t.test(
  'a report is created pending, generated in the background, listed, downloaded and deleted',
  async (t) => {
    const clock = clockAt(NOW);
    const s = await startTestServer(t, {}, { now: clock.now });
    for (const name of ['Trail Shoe', 'Rain Jacket']) {
      t.equal(
        (await s.request('POST', '/v1/products', { body: productBody({ name }) })).status,
        201,
      );
    }
    const created = await s.request('POST', '/v1/reports', {
      body: { type: 'products', format: 'csv', start_date: '2026-11-01', end_date: '2026-11-14' },
    });
    t.equal(created.status, 201);
    t.match(created.body.id, /^rpt_[A-Za-z0-9]{16}$/);
    t.equal(created.headers.get('location'), `/v1/reports/${created.body.id}`);
    t.same(created.body, {
      id: created.body.id,
      type: 'products',
      format: 'csv',
      status: 'pending',
      start_date: '2026-11-01',
      end_date: '2026-11-14',
      file_name: 'agentshelf-products-2026-11-01_2026-11-14.csv',
      content_type: 'text/csv; charset=utf-8; header=present',
      bytes: null,
      download_url: null,
      failure_reason: null,
      created_at: NOW,
      finished_at: null,
    });

    const ready = await waitForReport(s, created.body.id);
    t.equal(ready.status, 'ready');
    t.equal(ready.download_url, `${s.config.BASE_URL}/v1/reports/${ready.id}/download`);
    t.equal(ready.finished_at, NOW);
    const file = reportFile(s.dir, ready.id, 'csv');
    t.equal(ready.bytes, fs.statSync(file).size);

    const download = await s.request('GET', `/v1/reports/${ready.id}/download`);
    t.equal(download.status, 200);
    t.equal(download.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');
    t.equal(
      download.headers.get('content-disposition'),
      `attachment; filename="agentshelf-products-2026-11-01_2026-11-14.csv"; filename*=UTF-8''agentshelf-products-2026-11-01_2026-11-14.csv`,
    );
    t.equal(download.headers.get('x-content-type-options'), 'nosniff');
    t.equal(download.text, fs.readFileSync(file, 'utf8'));
    const rows = parse(download.text, { columns: true }) as Record<string, string>[];
    t.same(rows.map((r) => r.name).sort(), ['Rain Jacket', 'Trail Shoe']);
    t.match(rows[0], { price: '79.99', currency: 'USD', brand: 'Northwind', interactions: '0' });

    const list = await s.request('GET', '/v1/reports');
    t.equal(list.status, 200);
    t.same(list.body.pagination, { limit: 50, offset: 0, total: 1, has_more: false });
    t.same(list.body.reports, [ready]);

    const deleted = await s.request('DELETE', `/v1/reports/${ready.id}`);
    t.equal(deleted.status, 204);
    t.notOk(fs.existsSync(file), 'the file went with the report');
    t.equal((await s.request('GET', `/v1/reports/${ready.id}`)).status, 404);
    t.equal((await s.request('GET', `/v1/reports/${ready.id}/download`)).status, 404);
    t.equal((await s.request('DELETE', `/v1/reports/${ready.id}`)).status, 404);
  },
);

t.test('the list is newest first, paginated and filtered', async (t) => {
  const clock = clockAt(NOW);
  const s = await startTestServer(t, {}, { now: clock.now });
  const made: any[] = [];
  for (const [type, format] of [
    ['feed_diagnostics', 'json'],
    ['products', 'json'],
    ['analytics', 'html'],
  ] as const) {
    made.push(await generateReportVia(s, { type, format }));
    clock.advance(60);
  }
  const page = await s.request('GET', '/v1/reports?limit=2');
  t.same(
    page.body.reports.map((r: any) => r.id),
    [made[2].id, made[1].id],
  );
  t.same(page.body.pagination, { limit: 2, offset: 0, total: 3, has_more: true });
  const rest = await s.request('GET', '/v1/reports?limit=2&offset=2');
  t.same(
    rest.body.reports.map((r: any) => r.id),
    [made[0].id],
  );
  const json = await s.request('GET', '/v1/reports?format=json&type=products');
  t.same(
    json.body.reports.map((r: any) => r.id),
    [made[1].id],
  );
  const ready = await s.request('GET', '/v1/reports?status=ready');
  t.equal(ready.body.pagination.total, 3);
  t.equal((await s.request('GET', '/v1/reports?status=failed')).body.pagination.total, 0);
});

t.test(
  'the default period is the last 30 days to today (UTC); one end sets the other',
  async (t) => {
    const s = await startTestServer(t, {}, { now: clockAt(NOW).now });
    const cases: [Record<string, string>, string, string][] = [
      [{}, '2026-10-22', '2026-11-20'],
      [{ start_date: '2026-01-01' }, '2026-01-01', '2026-01-30'],
      [{ end_date: '2026-03-01' }, '2026-01-31', '2026-03-01'],
      [
        { start_date: '2026-11-01T23:30:00-02:00', end_date: '2026-11-03T00:10:00Z' },
        '2026-11-02',
        '2026-11-03',
      ],
      [{ start_date: '2024-01-01', end_date: '2024-12-31' }, '2024-01-01', '2024-12-31'],
    ];
    for (const [dates, start, end] of cases) {
      const res = await s.request('POST', '/v1/reports', {
        body: { type: 'analytics', format: 'json', ...dates },
      });
      t.equal(res.status, 201, JSON.stringify(dates));
      t.same([res.body.start_date, res.body.end_date], [start, end], JSON.stringify(dates));
    }
    const diag = await s.request('POST', '/v1/reports', {
      body: { type: 'feed_diagnostics', format: 'csv' },
    });
    t.same([diag.body.start_date, diag.body.end_date], [null, null]);
    t.equal(diag.body.file_name, 'agentshelf-feed-diagnostics-2026-11-20.csv');
  },
);

t.test('bad requests are refused naming the field, and store nothing', async (t) => {
  const s = await startTestServer(t);
  const body: [unknown, number, string, string][] = [
    [{ format: 'csv' }, 422, 'missing_parameter', 'type: is required'],
    [{ type: 'analytics' }, 422, 'missing_parameter', 'format: is required'],
    [
      { type: 'sales', format: 'csv' },
      422,
      'invalid_parameter',
      'type: must be one of analytics, products, feed_diagnostics',
    ],
    [
      { type: 'analytics', format: 'pdf' },
      422,
      'invalid_parameter',
      'format: must be one of csv, json, html',
    ],
    [
      { type: 'analytics', format: 'csv', start_date: '2026-02-30' },
      422,
      'invalid_parameter',
      'start_date: must be a date (YYYY-MM-DD) or an ISO 8601 date-time',
    ],
    [
      { type: 'analytics', format: 'csv', end_date: 'yesterday' },
      422,
      'invalid_parameter',
      'end_date: must be a date (YYYY-MM-DD) or an ISO 8601 date-time',
    ],
    [
      { type: 'analytics', format: 'csv', start_date: 20261101 },
      422,
      'invalid_parameter',
      'start_date: must be a string',
    ],
    [
      { type: 'analytics', format: 'csv', start_date: '2026-11-10', end_date: '2026-11-09' },
      422,
      'invalid_parameter',
      'end_date: must not be before start_date',
    ],
    [
      { type: 'analytics', format: 'csv', start_date: '2025-01-01', end_date: '2026-01-02' },
      422,
      'invalid_parameter',
      'end_date: must be at most 366 days after start_date',
    ],
    [
      { type: 'feed_diagnostics', format: 'csv', start_date: '2026-11-01' },
      422,
      'invalid_parameter',
      'start_date: does not apply to feed_diagnostics reports',
    ],
    [
      { type: 'feed_diagnostics', format: 'csv', end_date: '2026-11-01' },
      422,
      'invalid_parameter',
      'end_date: does not apply to feed_diagnostics reports',
    ],
    [
      { type: 'analytics', format: 'csv', email: 'a@b.c' },
      422,
      'invalid_parameter',
      'email: is not a known field',
    ],
    [[], 400, 'invalid_request', 'body: must be a JSON object'],
  ];
  for (const [b, status, code, details] of body) {
    const res = await s.request('POST', '/v1/reports', { body: b });
    t.equal(res.status, status, JSON.stringify(b));
    t.equal(res.body.error.code, code, JSON.stringify(b));
    t.equal(res.body.error.details, details, JSON.stringify(b));
  }
  const enveloped = await s.request('POST', '/v1/reports', {
    body: { type: 'analytics', format: 'csv', start_date: '2026-11-10', end_date: '2026-11-01' },
    headers: { prefer: 'envelope' },
  });
  t.same(enveloped.body.error.details, {
    field: 'end_date',
    reason: 'must not be before start_date',
  });
  const query: [string, string][] = [
    ['status=running', 'status: must be one of pending, ready, failed'],
    ['limit=0', 'limit: must be at least 1'],
    ['limit=251', 'limit: must be at most 250'],
    ['sort=name', 'sort: is not a known query parameter'],
  ];
  for (const [q, details] of query) {
    const res = await s.request('GET', `/v1/reports?${q}`);
    t.equal(res.status, 400, q);
    t.equal(res.body.error.details, details, q);
  }
  t.equal((await s.request('GET', '/v1/reports')).body.pagination.total, 0, 'nothing stored');
  t.equal((await s.request('GET', '/v1/reports/rpt_nope')).status, 404);
  t.equal((await s.request('GET', '/v1/reports/rpt_nope/download')).status, 404);
});

t.test('every level reads reports; read_write and admin create and delete them', async (t) => {
  const s = await startTestServer(t);
  const body = { type: 'feed_diagnostics', format: 'json' };
  const ro = s.keys.read_only;
  t.equal((await s.request('POST', '/v1/reports', { body, key: null })).status, 401);
  const refused = await s.request('POST', '/v1/reports', { body, key: ro });
  t.equal(refused.status, 403);
  t.equal(refused.body.error.code, 'forbidden');
  const report = await generateReportVia(s, body, s.keys.read_write);
  for (const key of [ro, s.keys.read_write, s.keys.admin]) {
    t.equal((await s.request('GET', '/v1/reports', { key })).status, 200);
    t.equal((await s.request('GET', `/v1/reports/${report.id}`, { key })).status, 200);
    t.equal((await s.request('GET', `/v1/reports/${report.id}/download`, { key })).status, 200);
  }
  t.equal((await s.request('GET', `/v1/reports/${report.id}/download`, { key: null })).status, 401);
  t.equal((await s.request('DELETE', `/v1/reports/${report.id}`, { key: ro })).status, 403);
  t.equal(
    (await s.request('DELETE', `/v1/reports/${report.id}`, { key: s.keys.read_write })).status,
    204,
  );
  const other = await generateReportVia(s, body);
  t.equal(
    (await s.request('DELETE', `/v1/reports/${other.id}`, { key: s.keys.admin })).status,
    204,
  );
});

t.test(
  'download is 409 while pending; a stopped server leaves the report pending and the next start generates it',
  async (t) => {
    const dir = t.testdir({});
    const first = await startTestServer(t, {}, { dir });
    await first.server.reports.stop();
    const created = await first.request('POST', '/v1/reports', {
      body: { type: 'products', format: 'json' },
    });
    t.equal(created.status, 201);
    const early = await first.request('GET', `/v1/reports/${created.body.id}/download`);
    t.equal(early.status, 409);
    t.equal(early.body.error.code, 'conflict');
    t.equal(early.headers.get('retry-after'), '2');
    t.match(early.body.error.message, /still being generated/);
    // A process killed mid-generation: the attempt was counted and a temporary left behind.
    await first.server.store.db
      .updateTable('reports')
      .set({ attempts: 1, started_at: '2026-11-20T00:00:00.000Z' })
      .execute();
    fs.mkdirSync(path.join(dir, 'reports'), { recursive: true });
    const stale = path.join(dir, 'reports', `.tmp-${created.body.id}.json.abc123`);
    fs.writeFileSync(stale, '{"report":');
    const orphan = path.join(dir, 'reports', 'rpt_0000000000000000.csv');
    fs.writeFileSync(orphan, 'id\n');
    await first.server.close();

    const second = await startTestServer(t, {}, { dir });
    const ready = await waitForReport(second, created.body.id);
    t.equal(ready.status, 'ready');
    t.notOk(fs.existsSync(stale), 'the temporary a killed process left is removed');
    t.notOk(fs.existsSync(orphan), 'a file without a report is removed');
    const row = await second.server.store.db
      .selectFrom('reports')
      .select('attempts')
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    t.equal(row.attempts, 2);
    const download = await second.request('GET', `/v1/reports/${created.body.id}/download`);
    t.equal(download.status, 200);
    t.same(JSON.parse(download.text).products, []);
  },
);

t.test('a report interrupted three times fails instead of being tried again', async (t) => {
  const dir = t.testdir({});
  const first = await startTestServer(t, {}, { dir });
  await first.server.reports.stop();
  const created = await first.request('POST', '/v1/reports', {
    body: { type: 'feed_diagnostics', format: 'csv' },
  });
  await first.server.store.db
    .updateTable('reports')
    .set({ attempts: 3, started_at: NOW })
    .execute();
  await first.server.close();
  const second = await startTestServer(t, {}, { dir });
  const failed = await waitForReport(second, created.body.id);
  t.equal(failed.status, 'failed');
  t.match(failed.failure_reason, /interrupted 3 times/);
  const download = await second.request('GET', `/v1/reports/${created.body.id}/download`);
  t.equal(download.status, 409);
  t.match(download.body.error.message, /failed \(generation was interrupted 3 times/);
});

t.test(
  'a report whose file cannot be written fails with the reason, and leaves nothing behind',
  async (t) => {
    const s = await startTestServer(t);
    // DATA_DIR/reports is a file: the directory cannot be made.
    fs.writeFileSync(path.join(s.dir, 'reports'), 'in the way');
    const failed = await generateReportVia(s, { type: 'products', format: 'html' });
    t.equal(failed.status, 'failed');
    t.match(failed.failure_reason, /^could not write the report file \((EEXIST|ENOTDIR)\)$/);
    t.equal(failed.download_url, null);
    t.equal(failed.bytes, null);
    t.equal((await s.request('GET', `/v1/reports/${failed.id}/download`)).status, 409);
    t.equal((await s.request('DELETE', `/v1/reports/${failed.id}`)).status, 204);
  },
);

t.test('a POST with an Idempotency-Key creates one report', async (t) => {
  const s = await startTestServer(t);
  const headers = { 'idempotency-key': 'report-once' };
  const body = { type: 'feed_diagnostics', format: 'json' };
  const a = await s.request('POST', '/v1/reports', { body, headers });
  const b = await s.request('POST', '/v1/reports', { body, headers });
  t.equal(a.status, 201);
  t.equal(b.body.id, a.body.id);
  await waitForReport(s, a.body.id);
  t.equal((await s.request('GET', '/v1/reports')).body.pagination.total, 1);
});

t.test('a report deleted while it is being generated leaves no file behind', async (t) => {
  const s = await startTestServer(t);
  await seedSynthetic(s.server.store.db, { count: 20_000, brands: 20 });
  const dir = path.join(s.dir, 'reports');
  fs.mkdirSync(dir);
  const writing = new Promise<string>((resolve) => {
    const watcher = fs.watch(dir, (_event, name) => {
      if (name && temporaryWriter(name) !== undefined) {
        watcher.close();
        resolve(name);
      }
    });
  });
  const created = await s.request('POST', '/v1/reports', {
    body: { type: 'products', format: 'csv' },
  });
  const temporary = await writing;
  t.equal((await s.request('DELETE', `/v1/reports/${created.body.id}`)).status, 204);
  t.ok(fs.existsSync(path.join(dir, temporary)), 'deleted while still being written');
  t.equal((await s.request('GET', `/v1/reports/${created.body.id}`)).status, 404);
  // The generation finishes, finds its report gone, and removes what it wrote.
  const emptied = new Promise<void>((resolve) => {
    const check = () => {
      if (fs.readdirSync(dir).length === 0) {
        watcher.close();
        resolve();
      }
    };
    const watcher = fs.watch(dir, check);
    check();
  });
  await emptied;
  t.same(fs.readdirSync(dir), []);
});
