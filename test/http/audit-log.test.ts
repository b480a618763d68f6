import t from 'tap';
import { insertAuditEntries } from '../../src/domain/audit/log.js';
import type { NewAuditLogRow } from '../../src/db/schema.js';
import { clockAt } from '../support/clock.js';
import { startTestServer, type TestServer } from '../support/server.js';

async function auditRows(s: TestServer) {
  return s.server.store.db.selectFrom('audit_log').selectAll().orderBy('id').execute();
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

t.test(
  'successes, 401s of known keys, 403s and 429s are audited; unknown keys are not',
  async (t) => {
    const clock = clockAt('2026-11-10T12:00:00.000Z');
    const s = await startTestServer(t, {}, { now: clock.now });
    const key = await s.createKey('read_only', { rpm: 2 });
    const ok = await s.request('GET', '/v1/products?limit=5', {
      key: key.secret,
      headers: { 'x-request-id': 'req-audit-1' },
    });
    t.equal(ok.status, 200);
    clock.advance(1);
    t.equal((await s.request('POST', '/v1/products', { key: key.secret, body: {} })).status, 403);
    clock.advance(1);
    t.equal((await s.request('GET', '/v1/products', { key: key.secret })).status, 429);
    clock.advance(1);
    await s.request('GET', '/v1/products', { key: null });
    await s.request('GET', '/v1/products', { key: 'ask_live_unknownunknownunknownunknown0000' });
    await s.request('GET', '/v1/products', { key: 'ask_test_unknownunknownunknownunknown0000' });
    await s.request('GET', '/v1/products', { key: 'not-even-a-key' });
    t.equal((await s.request('DELETE', `/v1/api-keys/${key.id}`)).status, 200);
    clock.advance(1);
    const revoked = await s.request('GET', '/v1/products/x', { key: key.secret });
    t.equal(revoked.status, 401);

    const page = await s.request('GET', `/v1/audit-log?key_id=${key.id}`);
    t.equal(page.status, 200);
    t.same(
      page.body.entries.map((e: any) => [e.time, e.method, e.path, e.status]),
      [
        ['2026-11-10T12:00:04.000Z', 'GET', '/v1/products/x', 401],
        ['2026-11-10T12:00:02.000Z', 'GET', '/v1/products', 429],
        ['2026-11-10T12:00:01.000Z', 'POST', '/v1/products', 403],
        ['2026-11-10T12:00:00.000Z', 'GET', '/v1/products', 200],
      ],
      'newest first, the path without its query string',
    );
    const first = page.body.entries[3];
    t.same(Object.keys(first).sort(), [
      'client_ip',
      'id',
      'key_id',
      'method',
      'path',
      'request_id',
      'status',
      'time',
    ]);
    t.equal(first.key_id, key.id);
    t.equal(first.request_id, 'req-audit-1');
    t.equal(first.client_ip, '127.0.0.1');
    t.equal(page.body.entries[0].request_id, revoked.headers.get('x-request-id'));
    t.same(page.body.pagination, { limit: 50, offset: 0, total: 4, has_more: false });

    const known = new Set([
      key.id,
      ...(await s.server.store.db.selectFrom('api_keys').select('id').execute()).map((k) => k.id),
    ]);
    const rows = await auditRows(s);
    t.ok(
      rows.every((r) => known.has(r.api_key_id)),
      'no row for a key the store does not know',
    );
    t.equal(
      rows.filter((r) => r.status === 401).length,
      1,
      'only the revoked key’s 401 is audited',
    );
  },
);

t.test('GET /v1/audit-log filters by key_id, since, until and status, and pages', async (t) => {
  const clock = clockAt('2026-11-10T12:00:00.000Z');
  const s = await startTestServer(t, {}, { now: clock.now });
  const rows: NewAuditLogRow[] = [];
  // Days 1-3 of November, 10 entries a day, alternating keys; statuses 200, 404, 429 in turn.
  for (let day = 1; day <= 3; day++) {
    for (let i = 0; i < 10; i++) {
      rows.push({
        created_at: `2026-11-0${day}T${String(i + 10)}:00:00.000Z`,
        api_key_id: i % 2 ? 'key_b' : 'key_a',
        method: 'GET',
        path: `/v1/products/${day}-${i}`,
        status: [200, 404, 429][i % 3]!,
        request_id: `req_${day}_${i}`,
        client_ip: '10.0.0.1',
      });
    }
  }
  await insertAuditEntries(s.server.store.db, rows);
  const list = async (query: string) => {
    const res = await s.request('GET', `/v1/audit-log?${query}`);
    t.equal(res.status, 200, query);
    return res.body;
  };
  const november = 'until=2026-11-03';
  t.equal((await list(november)).pagination.total, 30, 'a bare until date includes that day');
  t.equal((await list('since=2026-11-02&until=2026-11-02')).pagination.total, 10);
  t.equal(
    (await list('since=2026-11-02T12:00:00Z&until=2026-11-02T15:00:00Z')).pagination.total,
    3,
    'since is inclusive, until exclusive',
  );
  t.equal(
    (await list('since=2026-11-02T13:00:00%2B01:00&until=2026-11-02T15:00:00Z')).pagination.total,
    3,
    'a date-time with an offset is read in its zone',
  );
  const keyB = await list(`key_id=key_b&${november}`);
  t.equal(keyB.pagination.total, 15);
  t.ok(keyB.entries.every((e: any) => e.key_id === 'key_b'));
  const notFound = await list(`status=404&${november}`);
  t.equal(notFound.pagination.total, 9);
  t.equal((await list(`status=4xx&${november}`)).pagination.total, 18);
  t.equal((await list(`status=2xx&key_id=key_a&${november}`)).pagination.total, 6);

  const page1 = await list(`limit=4&${november}`);
  t.same(
    page1.entries.map((e: any) => e.request_id),
    ['req_3_9', 'req_3_8', 'req_3_7', 'req_3_6'],
  );
  t.same(page1.pagination, { limit: 4, offset: 0, total: 30, has_more: true });
  const last = await list(`limit=4&offset=28&${november}`);
  t.same(
    last.entries.map((e: any) => e.request_id),
    ['req_1_1', 'req_1_0'],
  );
  t.equal(last.pagination.has_more, false);

  for (const [query, field] of [
    ['status=4x', 'status'],
    ['status=600', 'status'],
    ['since=yesterday', 'since'],
    ['since=2026-11-31', 'since'],
    ['until=2026-11-02T10:00:00', 'until'],
    ['since=2026-11-03&until=2026-11-02', 'until'],
    ['limit=251', 'limit'],
    ['keyid=key_a', 'keyid'],
  ] as [string, string][]) {
    const res = await s.request('GET', `/v1/audit-log?${query}`, {
      headers: { prefer: 'envelope' },
    });
    t.equal(res.status, 400, query);
    t.equal(res.body.error.details.field, field, `${query} names ${field}`);
  }
  t.equal((await s.request('GET', '/v1/audit-log', { key: s.keys.read_write })).status, 403);
});

t.test('entries are written in batches of AUDIT_FLUSH_ROWS, or every AUDIT_FLUSH_MS', async (t) => {
  const s = await startTestServer(t, { AUDIT_FLUSH_ROWS: '5', AUDIT_FLUSH_MS: '60000' });
  for (let i = 0; i < 4; i++) await s.request('GET', '/v1/products', { key: s.keys.read_only });
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal((await auditRows(s)).length, 0, 'four entries wait for the fifth');
  await s.request('GET', '/v1/products', { key: s.keys.read_only });
  await until(async () => (await auditRows(s)).length === 5, 'a batch of five');

  const timed = await startTestServer(t, { AUDIT_FLUSH_ROWS: '1000', AUDIT_FLUSH_MS: '20' });
  await timed.request('GET', '/v1/products', { key: timed.keys.read_only });
  await until(async () => (await auditRows(timed)).length === 1, 'the timed flush');
});

t.test('queued entries are written when the server shuts down', async (t) => {
  const first = await startTestServer(t, { AUDIT_FLUSH_MS: '60000' });
  for (let i = 0; i < 3; i++) {
    await first.request('GET', '/v1/products', { key: first.keys.read_write });
  }
  t.equal((await auditRows(first)).length, 0);
  await first.server.close();
  const second = await startTestServer(t, {}, { dir: first.dir });
  t.equal((await auditRows(second)).length, 3);
});

t.test('entries older than AUDIT_RETENTION_DAYS are swept at start and on schedule', async (t) => {
  const clock = clockAt('2026-11-10T12:00:00.000Z');
  const first = await startTestServer(t, { AUDIT_RETENTION_DAYS: '30' }, { now: clock.now });
  const entry = (created_at: string): NewAuditLogRow => ({
    created_at,
    api_key_id: 'key_x',
    method: 'GET',
    path: '/v1/products',
    status: 200,
    request_id: `req_${created_at}`,
    client_ip: null,
  });
  // The writer handles its work in order: once this flush is done, so is the start-up sweep.
  await first.server.deps.audit!.flush();
  await insertAuditEntries(first.server.store.db, [
    entry('2026-10-11T11:59:59.999Z'),
    entry('2026-10-11T12:00:00.000Z'),
    entry('2026-11-01T00:00:00.000Z'),
  ]);
  t.equal(await first.server.deps.audit!.sweep(), 1, 'one entry is more than 30 days old');
  t.same(
    (await auditRows(first)).map((r) => r.created_at),
    ['2026-10-11T12:00:00.000Z', '2026-11-01T00:00:00.000Z'],
  );
  await first.server.close();

  clock.set('2026-11-30T12:00:00.000Z');
  const second = await startTestServer(
    t,
    { AUDIT_RETENTION_DAYS: '30' },
    {
      now: clock.now,
      dir: first.dir,
    },
  );
  const page = await second.request('GET', '/v1/audit-log?key_id=key_x');
  t.same(
    page.body.entries.map((e: any) => e.time),
    ['2026-11-01T00:00:00.000Z'],
    'the start-up sweep ran before the page was read',
  );
});

t.test('AUDIT_LOG=off writes no entries', async (t) => {
  const s = await startTestServer(t, { AUDIT_LOG: 'off' });
  await s.request('GET', '/v1/products', { key: s.keys.read_only });
  const page = await s.request('GET', '/v1/audit-log');
  t.equal(page.status, 200);
  t.same(page.body.entries, []);
  t.equal((await auditRows(s)).length, 0);
});
