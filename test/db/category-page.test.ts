import fc from 'fast-check';
import t from 'tap';
import {
  countProducts,
  findProductPageJson,
  pageInCreationOrder,
  type ProductFilter,
} from '../../src/db/queries/products.js';
import { startTestServer } from '../support/server.js';

// A category's or a brand's page is read one of two ways (db/queries/products.ts); both must
// give the same products, and the counts must match the products whatever the writes were.

const CATEGORIES = ['Apparel', 'Apparel > Shoes', 'Apparel > Shoes > Running', 'Apparelx', 'Home'];
const STATUSES = ['active', 'inactive', 'draft'] as const;
const BRANDS = ['Northwind', 'Campfire'];

interface Shadow {
  id: string;
  category: string | null;
  status: (typeof STATUSES)[number];
  attributes: { brand?: string };
  created_at: string;
}

function matches(p: Shadow, filter: ProductFilter): boolean {
  if (filter.status && p.status !== filter.status) return false;
  const c = filter.category;
  if (c && !(p.category === c || (p.category ?? '').startsWith(`${c} > `))) return false;
  if (filter.brand !== undefined && p.attributes.brand !== filter.brand) return false;
  return true;
}

t.test(
  'both ways of reading a category page agree, and the counts follow every write',
  async (t) => {
    const s = await startTestServer(t);
    const db = s.server.store.db;
    const shadow = new Map<string, Shadow>();
    const write = fc.oneof(
      fc.record({
        op: fc.constant('create' as const),
        category: fc.option(fc.constantFrom(...CATEGORIES), { nil: null }),
        status: fc.constantFrom(...STATUSES),
        brand: fc.option(fc.constantFrom(...BRANDS), { nil: undefined }),
      }),
      fc.record({
        op: fc.constant('update' as const),
        pick: fc.nat(),
        category: fc.option(fc.constantFrom(...CATEGORIES), { nil: null }),
        status: fc.option(fc.constantFrom(...STATUSES), { nil: undefined }),
        brand: fc.option(fc.constantFrom(...BRANDS), { nil: undefined }),
      }),
      fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 12 }), async (writes) => {
        for (const w of writes) {
          if (w.op === 'create') {
            const res = await s.request('POST', '/v1/products', {
              body: {
                name: 'P',
                price: 1,
                category: w.category,
                status: w.status,
                attributes: w.brand ? { brand: w.brand } : {},
              },
            });
            shadow.set(res.body.id, res.body);
            continue;
          }
          const ids = [...shadow.keys()];
          if (ids.length === 0) continue;
          const id = ids[w.pick % ids.length]!;
          if (w.op === 'delete') {
            await s.request('DELETE', `/v1/products/${id}`);
            shadow.delete(id);
          } else {
            const res = await s.request('PUT', `/v1/products/${id}`, {
              body: {
                category: w.category,
                attributes: w.brand ? { brand: w.brand } : {},
                ...(w.status ? { status: w.status } : {}),
              },
            });
            shadow.set(id, res.body);
          }
        }
        const all = [...shadow.values()].sort((a, b) =>
          a.created_at === b.created_at
            ? a.id < b.id
              ? -1
              : 1
            : a.created_at < b.created_at
              ? -1
              : 1,
        );
        const filters = [undefined, ...BRANDS].flatMap((brand) =>
          (brand === undefined ? [undefined, ...CATEGORIES] : [undefined, 'Apparel']).flatMap(
            (category) => [undefined, ...STATUSES].map((status) => ({ category, status, brand })),
          ),
        );
        for (const filter of filters) {
          const expected = all.filter((p) => matches(p, filter)).map((p) => p.id);
          t.equal(await countProducts(db, filter), expected.length);
          for (const page of [
            { limit: 3, offset: 0 },
            { limit: 4, offset: 2 },
          ]) {
            const want = expected.slice(page.offset, page.offset + page.limit);
            for (const creationOrder of [true, false]) {
              const got = await findProductPageJson(db, filter, page, { creationOrder });
              const ids = (JSON.parse(got.json) as { id: string }[]).map((p) => p.id);
              if (ids.join() !== want.join()) {
                throw new Error(
                  `${JSON.stringify(filter)} ${JSON.stringify(page)} creationOrder=${creationOrder}: ${ids.join()} != ${want.join()}`,
                );
              }
              t.equal(got.count, want.length);
            }
          }
        }
      }),
      { numRuns: 25 },
    );
  },
);

t.test('a category page is read in creation order when most of the scope matches', async (t) => {
  // 1,000,000 products, a page of 250: a category of half of them walks creation order...
  t.equal(pageInCreationOrder(500_000, 1_000_000, 250), true);
  // ...one of 5,000 is read from its index and sorted...
  t.equal(pageInCreationOrder(5_000, 1_000_000, 250), false);
  // ...and where neither way reads more than about 32,000 rows, the choice turns.
  t.equal(pageInCreationOrder(31_000, 1_000_000, 250), false);
  t.equal(pageInCreationOrder(32_000, 1_000_000, 250), true);
  t.equal(pageInCreationOrder(0, 1_000_000, 250), false, 'nothing matches: nothing to walk');
});
