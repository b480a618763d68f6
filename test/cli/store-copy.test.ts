import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { orderByForeignKeys } from '../../src/db/copy.js';
import { dialectOf } from '../../src/db/dialect.js';
import { searchProductGroups } from '../../src/db/queries/product-search.js';
import { openStoreAt, type Store, type StoreLocation } from '../../src/db/store.js';
import { runCli } from '../support/cli.js';
import { freshDatabaseUrl, onPostgres } from '../support/store.js';

type Row = Record<string, unknown>;

function sqliteAt(file: string): StoreLocation {
  return { dialect: 'sqlite', file };
}

/**
 * Every table but Kysely's own and those derived from others (SQLite's search index, which a
 * copy rebuilds from the copied products), from the store's catalogue.
 */
async function tableNames(store: Store): Promise<string[]> {
  const tables = await store.db.introspection.getTables();
  const derived = dialectOf(store.db);
  return tables
    .map((t) => t.name)
    .filter((n) => !n.startsWith('kysely_') && !derived.isDerivedTable(n));
}

/** What the search index finds for a few words (the copy rebuilds it from the products). */
async function searched(store: Store): Promise<string[]> {
  const found: string[] = [];
  for (const word of ['jacket', 'lamp', 'coffee', 'card']) {
    const rows = await searchProductGroups(store.db, [word], {}, { limit: 100, offset: 0 });
    // As a set: each store ranks in its own way.
    found.push(
      `${word}: ${rows
        .map((r) => String(r.group_key))
        .sort()
        .join(' ')}`,
    );
  }
  return found;
}

/**
 * A table's rows as comparable text, sorted (numbers as numbers, whatever the driver gives);
 * without the columns a store computes itself (PostgreSQL's search vector).
 */
async function rowsOf(store: Store, table: string): Promise<string[]> {
  const { rows } = await sql<Row>`select * from ${sql.table(table)}`.execute(store.db);
  const derived = dialectOf(store.db);
  return rows
    .map((row) =>
      JSON.stringify(
        Object.keys(row)
          .filter((k) => !derived.isDerivedColumn(table, k))
          .sort()
          .map((k) => {
            const v = row[k];
            return [k, typeof v === 'bigint' || /^-?\d+$/.test(String(v)) ? String(v) : v];
          }),
      ),
    )
    .sort();
}

/**
 * Puts rows into every table the demo seed left empty, on SQLite: values by column type
 * (awkward text included: quotes, newlines, emoji; the largest safe integer), foreign keys
 * pointing at rows of their parent tables.
 */
async function fillEveryTable(store: Store): Promise<void> {
  const db = store.db;
  const tables = await tableNames(store);
  const parents = await dialectOf(db).foreignKeyParents(db);
  for (const table of orderByForeignKeys(tables, parents)) {
    const { rows: has } = await sql<{
      n: number;
    }>`select count(*) as n from ${sql.table(table)}`.execute(db);
    if (Number(has[0]!.n) > 0) continue;
    const { rows: columns } = await sql<{ name: string; type: string; pk: number }>`
      select name, type, pk from pragma_table_info(${table})`.execute(db);
    const { rows: fks } = await sql<{ from: string; table: string; to: string }>`
      select "from", "table", "to" from pragma_foreign_key_list(${table})`.execute(db);
    for (let i = 0; i < 3; i++) {
      const row: Row = {};
      for (const c of columns) {
        const fk = fks.find((f) => f.from === c.name);
        if (fk) {
          const { rows: parent } =
            await sql<Row>`select ${sql.ref(fk.to)} as v from ${sql.table(fk.table)} limit 1 offset ${i}`.execute(
              db,
            );
          row[c.name] = parent[0]?.v ?? null;
        } else if (/INT/i.test(c.type)) {
          row[c.name] = i === 2 ? Number.MAX_SAFE_INTEGER - (c.pk ? 0 : 1) : i + 1;
        } else {
          row[c.name] = [`${table}.${c.name} ${i}`, 'it\'s "quoted"\nand 🛒 ünïcode', ''][i];
        }
      }
      await sql`insert into ${sql.table(table)} (${sql.join(Object.keys(row).map((k) => sql.ref(k)))}) values (${sql.join(Object.values(row))})`.execute(
        db,
      );
    }
  }
}

t.test('store copy moves every table, row for row, SQLite to PostgreSQL and back', async (t) => {
  const dir = t.testdir({});
  const env = { DATA_DIR: dir, PUBLIC_DIR: path.join(dir, 'public') };
  const seeded = runCli(['seed', '--demo'], env);
  t.equal(seeded.status, 0, seeded.stderr);
  const source = openStoreAt(sqliteAt(path.join(dir, 'agentshelf.sqlite')));
  t.teardown(() => source.close());
  await fillEveryTable(source);
  const tables = await tableNames(source);
  for (const table of tables) {
    t.ok((await rowsOf(source, table)).length > 0, `${table} has rows to copy`);
  }

  // The middle stop: PostgreSQL when the tests run on it, another SQLite file otherwise.
  const middleUrl = onPostgres()
    ? await freshDatabaseUrl()
    : `sqlite:${path.join(dir, 'middle', 'agentshelf.sqlite')}`;
  const there = runCli(['store', 'copy', '--to', middleUrl, '--json', '--batch', '500'], env);
  t.equal(there.status, 0, there.stderr);
  const report = JSON.parse(there.stdout);
  t.equal(report.ok, true);
  t.notMatch(there.stdout, /:[^:@/]+@/, 'no password in the output');
  // `workers` holds the source's live processes, which are not the target's: never copied.
  const copied = tables.filter((table) => table !== 'workers');
  t.same(
    report.tables.map((x: any) => x.table).sort(),
    [...copied].sort(),
    'every table of the schema but workers, none missing, none made up',
  );
  const middleLocation: StoreLocation = onPostgres()
    ? { dialect: 'postgres', url: middleUrl }
    : sqliteAt(middleUrl.slice('sqlite:'.length));
  const middle = openStoreAt(middleLocation);
  t.teardown(() => middle.close());

  const backFile = path.join(dir, 'back.sqlite');
  // The way back starts from the middle store: DATABASE_URL, or the file in its DATA_DIR.
  const middleEnv: Record<string, string> = onPostgres()
    ? { DATA_DIR: path.join(dir, 'middle'), DATABASE_URL: middleUrl }
    : { DATA_DIR: path.join(dir, 'middle') };
  const back = runCli(['store', 'copy', '--to', `sqlite:${backFile}`], middleEnv);
  t.equal(back.status, 0, back.stderr);
  t.match(back.stdout, /row counts match/);
  const returned = openStoreAt(sqliteAt(backFile));
  t.teardown(() => returned.close());

  t.same(await rowsOf(middle, 'workers'), [], "the source's workers are not copied");
  for (const table of copied) {
    const original = await rowsOf(source, table);
    t.same(await rowsOf(middle, table), original, `${table}: the same rows there`);
    t.same(await rowsOf(returned, table), original, `${table}: the same rows back`);
  }
  const words = await searched(source);
  t.ok(
    words.every((w) => /: \S/.test(w)),
    'the source finds every word',
  );
  t.same(await searched(middle), words, 'the search index finds the same there');
  t.same(await searched(returned), words, 'and back');

  // Generated ids continue after the copied ones.
  const maxSeq = Number(
    (
      await middle.db
        .selectFrom('events')
        .select((eb) => eb.fn.max('seq').as('m'))
        .executeTakeFirstOrThrow()
    ).m,
  );
  const inserted = await middle.db
    .insertInto('events')
    .values({
      id: 'evt_after_copy',
      type: 'product.created',
      data: '{}',
      created_at: new Date().toISOString(),
    })
    .returning('seq')
    .executeTakeFirstOrThrow();
  t.ok(Number(inserted.seq) > maxSeq, 'a new event gets a seq after the copied ones');
});

t.test('store copy refuses a target holding data unless --force, which empties it', async (t) => {
  const dir = t.testdir({});
  const env = { DATA_DIR: dir, PUBLIC_DIR: path.join(dir, 'public') };
  t.equal(runCli(['seed', '--demo'], env).status, 0);
  const target = onPostgres() ? await freshDatabaseUrl() : `sqlite:${path.join(dir, 'to.sqlite')}`;
  t.equal(runCli(['store', 'copy', '--to', target], env).status, 0, 'an empty target is fine');
  const again = runCli(['store', 'copy', '--to', target], env);
  t.equal(again.status, 1);
  t.match(again.stderr, /target store is not empty \(.*products.*\); give --force/);
  const forced = runCli(['store', 'copy', '--to', target, '--force', '--json'], env);
  t.equal(forced.status, 0, forced.stderr);
  const products = JSON.parse(forced.stdout).tables.find((x: any) => x.table === 'products');
  t.ok(products.source > 0 && products.source === products.target, 'copied once, not twice');

  const usage = runCli(['store', 'copy', '--to', 'mysql://x'], env);
  t.equal(usage.status, 2);
  t.match(usage.stderr, /--to must be a postgres:\/\/ URL or sqlite:PATH/);
  const self = runCli(
    ['store', 'copy', '--to', `sqlite:${path.join(dir, 'agentshelf.sqlite')}`],
    env,
  );
  t.equal(self.status, 2);
  t.match(self.stderr, /names the configured store itself/);
  const help = runCli(['store', '--help'], env);
  t.equal(help.status, 0);
  t.match(help.stdout, /--force/);
});
