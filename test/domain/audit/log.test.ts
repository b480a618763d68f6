import { sql } from 'kysely';
import path from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { openStore } from '../../../src/db/store.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import type { NewAuditLogRow } from '../../../src/db/schema.js';
import { insertAuditEntries } from '../../../src/domain/audit/log.js';
import { sweepAuditLog } from '../../../src/domain/audit/writes.js';
import { AuditWriter, type AuditTuple } from '../../../src/domain/audit/writer.js';
import { testStoreConfig } from '../../support/store.js';

t.test('batches of any size are written exactly, whatever the order of their fields', async (t) => {
  const store = openStore(await testStoreConfig(path.join(t.testdir({}), 'db.sqlite')));
  t.teardown(() => store.close());
  await migrateToLatest(store.db);
  const make = (i: number): NewAuditLogRow => {
    const row = {
      created_at: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
      api_key_id: `key_${i % 7}`,
      method: ['GET', 'POST', 'PUT', 'DELETE'][i % 4]!,
      path: `/v1/products/p${i}`,
      status: 200 + (i % 5),
      request_id: `req_${i}`,
      client_ip: i % 3 ? `10.0.0.${i % 250}` : null,
    };
    // Every third row lists its fields backwards: values must land in their own columns.
    return i % 3 === 0
      ? (Object.fromEntries(Object.entries(row).reverse()) as NewAuditLogRow)
      : row;
  };
  let next = 0;
  for (const size of [1, 399, 400, 401, 1234]) {
    const batch = Array.from({ length: size }, () => make(next++));
    await insertAuditEntries(store.db, batch);
  }
  const rows = await store.db.selectFrom('audit_log').selectAll().orderBy('id').execute();
  t.equal(rows.length, next);
  t.same(
    rows.map(({ id: _id, ...rest }) => rest),
    Array.from({ length: next }, (_, i) => {
      const { ...row } = make(i);
      return {
        created_at: row.created_at,
        api_key_id: row.api_key_id,
        method: row.method,
        path: row.path,
        status: row.status,
        request_id: row.request_id,
        client_ip: row.client_ip,
      };
    }),
  );
  t.equal(await sweepAuditLog(store.db, new Date(Date.UTC(2026, 10, 1) + 1000 * 1000), 300), 1000);
  t.equal((await store.db.selectFrom('audit_log').select('id').execute()).length, next - 1000);
});

t.test(
  'while the store refuses writes the writer keeps entries, drops the oldest past its cap, and catches up',
  async (t) => {
    const store = openStore(await testStoreConfig(path.join(t.testdir({}), 'db.sqlite')));
    t.teardown(() => store.close());
    await migrateToLatest(store.db);
    const writer = new AuditWriter(pino({ level: 'silent' }), {
      location: store.location,
      flushMs: 60_000,
      flushRows: 1000,
      retentionDays: 90,
      now: () => new Date('2026-11-10T12:00:00Z'),
      maxQueued: 5,
    });
    t.teardown(() => writer.close());
    const entry = (i: number): AuditTuple => [
      Date.parse('2026-11-10T12:00:00Z') + i * 1000,
      'key_a',
      'GET',
      '/v1/products',
      200,
      `req_${i}`,
      null,
    ];
    // A real refusal: the table is gone for a while.
    await sql`alter table audit_log rename to audit_log_away`.execute(store.db);
    for (let i = 0; i < 4; i++) writer.record(entry(i));
    t.equal(await writer.flush(), 4, 'four entries wait for the store');
    for (let i = 4; i < 7; i++) writer.record(entry(i));
    t.equal(await writer.flush(), 5, 'at most five are kept');
    await sql`alter table audit_log_away rename to audit_log`.execute(store.db);
    await writer.close();
    const rows = await store.db
      .selectFrom('audit_log')
      .select('request_id')
      .orderBy('id')
      .execute();
    t.same(
      rows.map((r) => r.request_id),
      ['req_2', 'req_3', 'req_4', 'req_5', 'req_6'],
      'the five newest entries were kept and written once the store took them',
    );
  },
);
