import fc from 'fast-check';
import { sql } from 'kysely';
import t from 'tap';
import { dialectOf } from '../../src/db/dialect.js';
import type { Db } from '../../src/db/store.js';
import { searchProductGroups } from '../../src/db/queries/product-search.js';
import { ProductCreate, ProductUpdate } from '../../src/domain/products/schemas.js';
import { createProduct, deleteProduct, updateProduct } from '../../src/domain/products/products.js';
import { withTransaction } from '../../src/db/transaction.js';
import { startTestStore } from '../support/pipeline.js';
import { onPostgres } from '../support/store.js';

// The search index (SQLite FTS5 by triggers, PostgreSQL's GIN expression index) follows every
// product write in the write's transaction: after any sequence of creates, updates (of each
// indexed field, of status, of nothing indexed) and deletes, a search for each word finds
// exactly the active products whose name, description, brand or category holds that word.

// Words that no store stems into one another and that no store drops as a stop word.
const WORDS = [
  'amber',
  'basalt',
  'cobalt',
  'dune',
  'ember',
  'fjord',
  'garnet',
  'harbor',
  'indigo',
  'juniper',
];
const STATUSES = ['active', 'inactive', 'draft'] as const;

interface Shadow {
  id: string;
  name: string;
  description: string | null;
  brand: string | null;
  category: string | null;
  status: (typeof STATUSES)[number];
}

const text = fc
  .tuple(
    fc.array(fc.constantFrom(...WORDS, 'Wool', 'x-9', '42'), { minLength: 1, maxLength: 4 }),
    fc.constantFrom(' ', ', ', ' - '),
  )
  .map(([words, separator]) => words.join(separator));

const fields = {
  name: text,
  description: fc.option(text, { nil: null }),
  brand: fc.option(text, { nil: null }),
  category: fc.option(
    text.map((c) => `Home > ${c}`),
    { nil: null },
  ),
  status: fc.constantFrom(...STATUSES),
};

const write = fc.oneof(
  fc.record({ op: fc.constant('create' as const), ...fields }),
  fc.record(
    {
      op: fc.constant('update' as const),
      pick: fc.nat(),
      ...fields,
      price: fc.integer({ min: 1, max: 500 }),
    },
    { requiredKeys: ['op', 'pick'] },
  ),
  fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }),
);

function wordsOf(p: Shadow): Set<string> {
  const all = [p.name, p.description, p.brand, p.category].filter((v) => v !== null).join(' ');
  return new Set(all.toLowerCase().match(/[a-z0-9]+/g) ?? []);
}

/** Every group (here: product) the index finds for a word, read through the index. */
async function found(db: Db, word: string): Promise<string[]> {
  return withTransaction(db, async (trx) => {
    // PostgreSQL would scan a table this small: make it read the GIN index.
    if (onPostgres()) await sql`set local enable_seqscan = off`.execute(trx);
    const rows = await searchProductGroups(trx, [word], {}, { limit: 10_000, offset: 0 });
    return rows.map((r) => String(r.group_key)).sort();
  });
}

t.test(
  'the search index finds exactly the active products holding a word, after any writes',
  async (t) => {
    const s = await startTestStore(t);
    const shadow = new Map<string, Shadow>();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 15 }), async (writes) => {
        for (const w of writes) {
          if (w.op === 'create') {
            const id = `p${++n}`;
            const { op: _, brand, ...rest } = w;
            await createProduct(
              s.db,
              ProductCreate.parse({ id, price: 5, ...rest, attributes: brand ? { brand } : {} }),
              { currency: 'USD' },
            );
            shadow.set(id, { id, ...rest, brand });
            continue;
          }
          const ids = [...shadow.keys()];
          if (ids.length === 0) continue;
          const id = ids[w.pick % ids.length]!;
          if (w.op === 'delete') {
            await deleteProduct(s.db, id);
            shadow.delete(id);
            continue;
          }
          const { op: _, pick: __, brand, ...rest } = w;
          const patch = {
            ...rest,
            ...(brand !== undefined ? { attributes: brand ? { brand } : {} } : {}),
          };
          await updateProduct(s.db, id, ProductUpdate.parse(patch));
          shadow.set(id, {
            ...shadow.get(id)!,
            ...rest,
            ...(brand !== undefined ? { brand } : {}),
          });
        }
        for (const word of [...WORDS, 'wool', '42']) {
          const expected = [...shadow.values()]
            .filter((p) => p.status === 'active' && wordsOf(p).has(word))
            .map((p) => p.id)
            .sort();
          const got = await found(s.db, word);
          if (got.join() !== expected.join()) {
            throw new Error(
              `"${word}": the index finds ${got.join()}, the products hold ${expected.join()}`,
            );
          }
        }
      }),
      { numRuns: 12, seed: 23 },
    );
    t.pass('the index matched the products after every run');
  },
);

t.test('a word is found in each indexed field, and the best match ranks first', async (t) => {
  const s = await startTestStore(t);
  const add = (id: string, input: Record<string, unknown>) =>
    createProduct(s.db, ProductCreate.parse({ id, price: 5, ...input }), { currency: 'USD' });
  await add('in-name', { name: 'Cobalt kettle' });
  await add('in-description', { name: 'Kettle', description: 'A cobalt glaze.' });
  await add('in-brand', { name: 'Mug', attributes: { brand: 'Cobalt Works' } });
  await add('in-category', { name: 'Bowl', category: 'Kitchen > Cobalt' });
  await add('inactive', { name: 'Cobalt teapot', status: 'inactive' });
  const rows = await searchProductGroups(s.db, ['cobalt'], {}, { limit: 10, offset: 0 });
  t.same(rows.map((r) => r.group_key).sort(), [
    'in-brand',
    'in-category',
    'in-description',
    'in-name',
  ]);
  t.equal(rows[0]!.group_key, 'in-name', 'a word in the name weighs most');
  t.equal(rows.at(-1)!.group_key, 'in-description', 'a word in the description weighs least');
  const best = async (maxHits: number) =>
    (
      await dialectOf(s.db)
        .searchGroups({ terms: ['cobalt'], match: 'any' }, undefined, {
          limit: 10,
          offset: 0,
          maxHits,
        })
        .execute(s.db)
    ).rows.map((r) => r.group_key);
  t.same(await best(2), ['in-name', 'in-brand'], 'past maxHits matches, the best of them');
  t.same(await best(4), ['in-name', 'in-brand', 'in-category', 'in-description'], 'up to it, all');
  const stemmed = await searchProductGroups(s.db, ['kettles'], {}, { limit: 10, offset: 0 });
  t.same(stemmed.map((r) => r.group_key).sort(), ['in-description', 'in-name'], 'stemmed');
});

t.test('products holding every word answer alone; any word only when none does', async (t) => {
  const s = await startTestStore(t);
  const add = (id: string, name: string, price = 5) =>
    createProduct(s.db, ProductCreate.parse({ id, price, name }), { currency: 'USD' });
  await add('cobalt-kettle', 'Cobalt kettle');
  await add('cobalt-mug', 'Cobalt mug');
  await add('amber-kettle', 'Amber kettle', 50);
  await add('basalt-bowl', 'Basalt bowl');
  const found = async (terms: string[], filter = {}, offset = 0, limit = 10) =>
    (await searchProductGroups(s.db, terms, filter, { limit, offset }))
      .map((r) => String(r.group_key))
      .sort();
  t.same(await found(['cobalt', 'kettle']), ['cobalt-kettle'], 'the one holding both');
  t.same(
    await found(['teal', 'kettle']),
    ['amber-kettle', 'cobalt-kettle'],
    'none holds both: those holding either',
  );
  t.same(
    await found(['cobalt', 'kettle'], { price: { min: 1000, currency: 'USD' } }),
    ['amber-kettle'],
    'the filter leaves none holding both: those holding either that it lets through',
  );
  t.same(await found(['cobalt', 'kettle'], {}, 1), [], 'the next page of the same side is empty');
  const pages = [
    ...(await found(['teal', 'kettle'], {}, 0, 1)),
    ...(await found(['teal', 'kettle'], {}, 1, 1)),
  ];
  t.same(pages.sort(), ['amber-kettle', 'cobalt-kettle'], 'the any-word side a page at a time');
});

t.test('PostgreSQL finds and ranks on the stored search vector', async (t) => {
  if (!onPostgres()) {
    t.pass('SQLite ranks in its FTS5 table, which stores its index');
    return;
  }
  const s = await startTestStore(t);
  await createProduct(
    s.db,
    ProductCreate.parse({ id: 'k1', price: 5, name: 'Cobalt kettle', description: 'Steel.' }),
    { currency: 'USD' },
  );
  const { rows: stored } = await sql<{ v: string }>`
    select search_vector::text as v from products where id = 'k1'`.execute(s.db);
  t.match(stored[0]!.v, /'cobalt':1A/, 'the generated column holds the weighted document');
  const search = dialectOf(s.db).searchGroups({ terms: ['cobalt'], match: 'any' }, sql`true`, {
    limit: 10,
    offset: 0,
    maxHits: 10_000,
  });
  const { rows: plans } = await sql<{
    'QUERY PLAN': unknown;
  }>`explain (verbose, format json) ${search}`.execute(s.db);
  const plan = JSON.stringify(plans[0]!['QUERY PLAN']);
  t.match(plan, /products\.search_vector @@/, 'the match is on the stored vector');
  t.notMatch(plan, /to_tsvector/, 'no vector is built at search time');
  const { rows: index } = await sql<{ def: string }>`
    select indexdef as def from pg_indexes where indexname = 'products_search_vector'`.execute(
    s.db,
  );
  t.match(index[0]?.def, /USING gin \(search_vector\) WHERE \(status = 'active'::text\)/);
});

t.test(
  'SQLite merges the index 16 segments at a time, and finds every write across them',
  async (t) => {
    if (onPostgres()) {
      t.pass('PostgreSQL keeps a GIN index, which has no segments');
      return;
    }
    const s = await startTestStore(t);
    const { rows } = await sql<{ v: number }>`
    select v from product_search_config where k = 'automerge'`.execute(s.db);
    t.same(rows, [{ v: 16 }], 'the setting the writes merge by (FTS5 default: 4)');
    // A transaction a product: 40 segments, some merged (past 16 at a level), some not.
    for (let i = 0; i < 40; i++) {
      await createProduct(
        s.db,
        ProductCreate.parse({ id: `m${i}`, price: 5, name: `Garnet lamp ${i}` }),
        { currency: 'USD' },
      );
    }
    const found = await searchProductGroups(s.db, ['garnet'], {}, { limit: 50, offset: 0 });
    t.equal(found.length, 40, 'every product, whichever segment holds it');
    const one = await searchProductGroups(s.db, ['garnet', '17'], {}, { limit: 50, offset: 0 });
    t.same(
      one.map((r) => String(r.group_key)),
      ['m17'],
      'every word: the one product',
    );
  },
);

t.test('a hit carries its variant group and brand, which follow the product', async (t) => {
  const s = await startTestStore(t);
  const groupsOf = async () =>
    (await searchProductGroups(s.db, ['cobalt'], {}, { limit: 10, offset: 0 })).map(
      (r) => `${r.brand ?? '-'}/${String(r.group_key)}`,
    );
  await createProduct(
    s.db,
    ProductCreate.parse({
      id: 'v1',
      price: 5,
      name: 'Cobalt mug',
      attributes: { item_group_id: 'g1' },
    }),
    { currency: 'USD' },
  );
  t.same(await groupsOf(), ['-/g1']);
  await updateProduct(s.db, 'v1', ProductUpdate.parse({ attributes: { item_group_id: 'g2' } }));
  t.same(await groupsOf(), ['-/g2'], 'a new group');
  await updateProduct(s.db, 'v1', ProductUpdate.parse({ attributes: { brand: 'Acme' } }));
  t.same(await groupsOf(), ['Acme/v1'], 'no group: the product alone, with its brand');
  const filtered = await searchProductGroups(
    s.db,
    ['cobalt'],
    { price: { max: 1000, currency: 'USD' } },
    { limit: 10, offset: 0 },
  );
  t.same(
    filtered.map((r) => `${r.brand}/${String(r.group_key)}`),
    ['Acme/v1'],
    'the same through a filter',
  );
});
