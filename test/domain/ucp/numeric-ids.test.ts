import fc from 'fast-check';
import t from 'tap';
import { createProduct } from '../../../src/domain/products/products.js';
import { ProductCreate } from '../../../src/domain/products/schemas.js';
import { getProduct, lookupCatalog, searchCatalog } from '../../../src/domain/ucp/catalog.js';
import { CursorSigner } from '../../../src/domain/ucp/cursor.js';
import { startTestStore } from '../../support/pipeline.js';

// Identifiers that look like numbers are text, on both stores: a lookup, a get_product and a
// browse answer as a JavaScript model of the catalogue says, whatever SQLite's type affinity
// or PostgreSQL's jsonb would make of "123", "0123", "1e3" or " 12". The model's answer is the
// one both stores must give.

interface Item {
  id: string;
  group?: string;
  status?: 'active' | 'draft';
}

/** Ids and group ids that differ as text and agree as numbers ("123", "0123", "123.0"). */
const CATALOGUE: Item[] = [
  { id: '123' },
  { id: '0123' },
  { id: '123.0' },
  { id: '1e3' },
  { id: '1000' },
  { id: '12' },
  { id: 'v-a', group: '007' },
  { id: 'v-b', group: '007' },
  { id: 'v-c', group: '1E3' },
  { id: 'v-d', group: '1E3' },
  { id: 'v-e', group: '7' },
  { id: 'v-f', group: '0.5' },
  { id: '7.0', group: '1000' },
  { id: '99', status: 'draft' },
  { id: 'v-g', group: '99', status: 'draft' },
];

/** Lookup ids: the catalogue's own, and texts a number-reader would confuse with them. */
const ASKED = [
  ...new Set([
    ...CATALOGUE.flatMap((p) => [p.id, ...(p.group ? [p.group] : [])]),
    ' 12',
    '12 ',
    '+123',
    '123e0',
    '1E3',
    '1000.0',
    '0x7B',
    '.5',
    '7',
    '07',
    '1',
  ]),
];

const groupOf = (p: Item) => p.group ?? p.id;
const active = CATALOGUE.filter((p) => (p.status ?? 'active') === 'active');

/** What a lookup of `ids` must answer: each product (group) with its variants' inputs. */
function expectedLookup(ids: readonly string[]) {
  const products = new Map<string, Map<string, string[]>>();
  const found = new Set<string>();
  const input = (group: string, variant: string, text: string) => {
    const variants = products.get(group) ?? new Map<string, string[]>();
    variants.set(variant, [...(variants.get(variant) ?? []), text].sort());
    products.set(group, variants);
  };
  for (const id of new Set(ids)) {
    for (const p of active.filter((p) => p.id === id)) {
      input(groupOf(p), p.id, `${id}:exact`);
      found.add(id);
    }
    if (active.some((p) => p.group === id)) {
      const members = active.filter((p) => groupOf(p) === id).map((p) => p.id);
      // The featured variant: the first asked for by its own id, else the one carrying the
      // group's id, else the first by id.
      const exact = [...new Set(ids)].find((asked) => members.includes(asked));
      const featured = exact ?? (members.includes(id) ? id : [...members].sort()[0]!);
      input(id, featured, `${id}:featured`);
      found.add(id);
    }
  }
  return {
    products: [...products]
      .map(([id, variants]) => ({ id, variants: [...variants].sort() }))
      .sort((a, b) => (a.id < b.id ? -1 : 1)),
    missing: [...new Set(ids)].filter((id) => !found.has(id)).sort(),
  };
}

t.test('numeric-looking ids are text on both stores', async (t) => {
  const s = await startTestStore(t);
  for (const p of CATALOGUE) {
    await createProduct(
      s.db,
      ProductCreate.parse({
        id: p.id,
        name: `Plain mug ${p.id}`,
        price: 5,
        status: p.status ?? 'active',
        category: 'Home > Mugs',
        attributes: p.group ? { item_group_id: p.group } : {},
      }),
      { currency: 'USD' },
    );
  }
  const deps = {
    db: s.db,
    storeName: 'Shop',
    currency: 'USD',
    cursors: new CursorSigner(() => Buffer.alloc(32)),
  };

  await t.test('lookup_catalog finds exactly the ids as text', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...ASKED), { minLength: 1, maxLength: 6 }),
        async (ids) => {
          const res = await lookupCatalog(deps, { ids });
          const got = {
            products: res.products
              .map((p) => ({
                id: p.id,
                variants: p.variants
                  .map((v): [string, string[]] => [
                    v.id,
                    (v.inputs ?? []).map((i) => `${i.id}:${i.match}`).sort(),
                  ])
                  .sort(),
              }))
              .sort((a, b) => (a.id < b.id ? -1 : 1)),
            missing: (res.messages ?? []).map((m) => m.content).sort(),
          };
          const want = expectedLookup(ids);
          if (JSON.stringify(got) !== JSON.stringify(want)) {
            throw new Error(
              `lookup ${JSON.stringify(ids)}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`,
            );
          }
        },
      ),
      { numRuns: 60, seed: 123 },
    );
  });

  await t.test('get_product answers each id as text', async (t) => {
    for (const id of ASKED) {
      const res = await getProduct(deps, { id });
      const want = expectedLookup([id]).products[0];
      t.equal('product' in res ? res.product?.id : undefined, want?.id, `get_product ${id}`);
    }
  });

  await t.test('a search gives the groups as text, from the index too', async (t) => {
    const res = await searchCatalog(deps, { query: 'plain mug', pagination: { limit: 50 } });
    t.same(res.response.products.map((p) => p.id).sort(), [...new Set(active.map(groupOf))].sort());
  });

  await t.test('a browse lists the groups by their text, not their number', async (t) => {
    const res = await searchCatalog(deps, {
      filters: { categories: ['Home > Mugs'] },
      pagination: { limit: 50 },
    });
    const groups = [...new Set(active.map(groupOf))].sort();
    t.same(
      res.response.products.map((p) => p.id),
      groups,
    );
  });
});
