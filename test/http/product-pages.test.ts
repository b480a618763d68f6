import { sql } from 'kysely';
import t, { type Test } from 'tap';
import { ANCHOR_EVERY } from '../../src/domain/products/page-anchors.js';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

const N = 2 * ANCHOR_EVERY + 5_000;

/** The ids of a page as plain SQL reads them: the reference the API must match. */
async function referencePage(s: TestServer, offset: number, limit: number, status?: string) {
  const rows = await sql<{ id: string }>`
    select id from products ${status ? sql`where status = ${status}` : sql``}
    order by created_at, id limit ${limit} offset ${offset}`.execute(s.server.store.db);
  return rows.rows.map((r) => r.id);
}

async function apiPage(s: TestServer, offset: number, limit: number, status?: string) {
  const query = new URLSearchParams({ offset: String(offset), limit: String(limit) });
  if (status) query.set('status', status);
  const res = await s.request('GET', `/v1/products?${query.toString()}`);
  if (res.status !== 200) throw new Error(`GET /v1/products?${query}: ${res.status} ${res.text}`);
  return (res.body.products as { id: string }[]).map((p) => p.id);
}

/** Offsets around every anchor and at the ends. */
function offsets(total: number): number[] {
  const list = [0, 1, 249];
  for (let a = ANCHOR_EVERY; a < total; a += ANCHOR_EVERY) list.push(a - 1, a, a + 1, a + 137);
  list.push(total - 250, total - 1, total);
  return list.filter((o) => o >= 0);
}

async function checkPages(t: Test, s: TestServer, total: number, status?: string) {
  for (const offset of offsets(total)) {
    for (const limit of [1, 250]) {
      t.same(
        await apiPage(s, offset, limit, status),
        await referencePage(s, offset, limit, status),
        `status ${status ?? 'any'}, offset ${offset}, limit ${limit}`,
      );
    }
  }
}

t.test(
  'deep pages are the rows plain offsets read, before and after the catalogue changes',
  async (t) => {
    const s = await startTestServer(t);
    await seedSynthetic(s.server.store.db, { count: N, brands: 20 });
    // Some products change status through the API (events), spread over the list.
    const ids = await referencePage(s, 0, N);
    for (let i = 3; i < N; i += 997) {
      const res = await s.request('PUT', `/v1/products/${ids[i]}`, {
        body: { status: 'inactive' },
      });
      t.equal(res.status, 200);
    }
    const inactive = Math.ceil((N - 3) / 997);
    await checkPages(t, s, N);
    await checkPages(t, s, N - inactive, 'active');
    await checkPages(t, s, inactive, 'inactive');

    // A product before the first anchor goes, and new ones arrive: every later position moves.
    t.equal((await s.request('DELETE', `/v1/products/${ids[5]}`)).status, 204);
    for (const id of ['Z1', 'Z2']) {
      const res = await s.request('POST', '/v1/products', { body: productBody({ id }) });
      t.equal(res.status, 201);
    }
    await checkPages(t, s, N + 1);
    await checkPages(t, s, N + 1 - inactive, 'active');
  },
);
