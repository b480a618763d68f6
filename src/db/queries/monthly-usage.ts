import type { Db } from '../store.js';

/** The requests each key has made in a month, as stored. */
export async function selectMonthlyUsage(
  db: Db,
  month: string,
): Promise<{ api_key_id: string; requests: number }[]> {
  const rows = await db
    .selectFrom('api_key_usage')
    .select(['api_key_id', 'requests'])
    .where('month', '=', month)
    .execute();
  return rows.map((r) => ({ api_key_id: r.api_key_id, requests: Number(r.requests) }));
}

function compareKeys(a: { keyId: string; month: string }, b: { keyId: string; month: string }) {
  if (a.keyId !== b.keyId) return a.keyId < b.keyId ? -1 : 1;
  return a.month < b.month ? -1 : a.month > b.month ? 1 : 0;
}

/**
 * Adds request counts (deltas, so two processes never overwrite each other's) in one
 * transaction, and returns each key's stored total after the addition, in input order.
 */
export async function addMonthlyUsage(
  db: Db,
  deltas: { keyId: string; month: string; requests: number }[],
): Promise<number[]> {
  // In key order: two processes adding to the same keys lock their rows in one order.
  const order = deltas
    .map((d, i) => ({ d, i }))
    .sort((a, b) => compareKeys(a.d, b.d))
    .map((x) => x.i);
  return db.transaction().execute(async (trx) => {
    const totals: number[] = new Array<number>(deltas.length);
    for (const i of order) {
      const d = deltas[i]!;
      const row = await trx
        .insertInto('api_key_usage')
        .values({ api_key_id: d.keyId, month: d.month, requests: d.requests })
        .onConflict((oc) =>
          oc.columns(['api_key_id', 'month']).doUpdateSet((eb) => ({
            requests: eb('api_key_usage.requests', '+', eb.ref('excluded.requests')),
          })),
        )
        .returning('requests')
        .executeTakeFirstOrThrow();
      totals[i] = Number(row.requests);
    }
    return totals;
  });
}
