import type { Db } from '../store.js';

/** The cheapest read that proves the store answers (and is migrated). */
export async function pingStore(db: Db): Promise<void> {
  await db.selectFrom('product_counts').select('status').limit(1).execute();
}
