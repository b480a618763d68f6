// stores: sqlite-only — the data step of a migration that landed before PostgreSQL support: every
//   PostgreSQL store is migrated from scratch, with no discovery_requests rows to fold
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import path from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { openStore } from '../../src/db/store.js';

t.test(
  'the discovery request log is folded into interactions and counted into the rollups',
  async (t) => {
    const dir = t.testdir({});
    const store = openStore(loadConfig({ DATA_DIR: dir, PUBLIC_DIR: path.join(dir, 'public') }));
    t.teardown(() => store.close());
    const migrator = new Migrator({
      db: store.db,
      provider: { getMigrations: async () => migrations },
    });
    const before = await migrator.migrateTo('20261121050000_category_counts');
    t.notOk(before.error);
    const rows: [string, string, string | null, number, number, string | null, string | null][] = [
      [
        '2026-11-20T10:00:00.000Z',
        '/v1/feeds/acme/products.json',
        'acme',
        200,
        100,
        'Mozilla/5.0 (compatible; GPTBot/1.2)',
        'GPTBot',
      ],
      [
        '2026-11-20T11:00:00.000Z',
        '/v1/feeds/acme/products.json',
        'acme',
        304,
        0,
        'Mozilla/5.0 (compatible; GPTBot/1.2)',
        'GPTBot',
      ],
      [
        '2026-11-20T12:00:00.000Z',
        '/v1/brands/acme',
        'acme',
        200,
        50,
        'ChatGPT-User/1.0',
        'ChatGPT-User',
      ],
      ['2026-11-21T09:00:00.000Z', '/v1/index.json', null, 200, 10, 'Googlebot/2.1', null],
      [
        '2026-11-21T09:30:00.000Z',
        '/v1/index.json',
        null,
        404,
        20,
        'Mozilla/5.0 (X11) Firefox/132.0',
        null,
      ],
    ];
    for (const [at, p, brand, status, bytes, ua, agent] of rows) {
      await sql`insert into discovery_requests (at, method, path, brand, status, bytes, user_agent, agent, is_ai_agent)
      values (${at}, 'GET', ${p}, ${brand}, ${status}, ${bytes}, ${ua}, ${agent}, ${agent ? 1 : 0})`.execute(
        store.db,
      );
    }
    await migrateToLatest(store.db);
    const moved = await store.db.selectFrom('interactions').selectAll().orderBy('id').execute();
    t.same(
      moved.map((r) => [r.at, r.source, r.path, r.brand, r.status, r.agent, r.operator, r.kind]),
      [
        [
          '2026-11-20T10:00:00.000Z',
          'server',
          '/v1/feeds/acme/products.json',
          'acme',
          200,
          'GPTBot',
          'OpenAI',
          'training',
        ],
        [
          '2026-11-20T11:00:00.000Z',
          'server',
          '/v1/feeds/acme/products.json',
          'acme',
          304,
          'GPTBot',
          'OpenAI',
          'training',
        ],
        [
          '2026-11-20T12:00:00.000Z',
          'server',
          '/v1/brands/acme',
          'acme',
          200,
          'ChatGPT-User',
          'OpenAI',
          'assistant',
        ],
        ['2026-11-21T09:00:00.000Z', 'server', '/v1/index.json', null, 200, null, null, 'bot'],
        ['2026-11-21T09:30:00.000Z', 'server', '/v1/index.json', null, 404, null, null, 'human'],
      ],
    );
    const agents = await store.db
      .selectFrom('analytics_daily_agents')
      .selectAll()
      .orderBy(['day', 'agent', 'kind'])
      .execute();
    t.same(
      agents.map((a) => [
        a.day,
        a.agent,
        a.kind,
        Number(a.interactions),
        Number(a.fetched),
        Number(a.bytes),
      ]),
      [
        ['2026-11-20', 'ChatGPT-User', 'assistant', 1, 1, 50],
        ['2026-11-20', 'GPTBot', 'training', 2, 2, 100],
        ['2026-11-21', '', 'bot', 1, 1, 10],
        ['2026-11-21', '', 'human', 1, 0, 20],
      ],
    );
    const brands = await store.db.selectFrom('analytics_daily_brands').selectAll().execute();
    t.same(
      brands.map((b) => [b.day, b.brand, Number(b.interactions), Number(b.fetched)]),
      [['2026-11-20', 'acme', 3, 3]],
    );
    const tables = (await store.db.introspection.getTables()).map((table) => table.name);
    t.notOk(tables.includes('discovery_requests'), 'the old table is gone');
  },
);
