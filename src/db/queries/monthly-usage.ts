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

/**
 * Adds request counts (deltas, so two processes never overwrite each other's) in one
 * transaction, and returns each key's stored total after the addition, in input order.
 */
export async function addMonthlyUsage(
  db: Db,
  deltas: { keyId: string; month: string; requests: number }[],
): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    const totals: number[] = [];
    for (const d of deltas) {
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
      totals.push(Number(row.requests));
    }
    return totals;
  });
}
