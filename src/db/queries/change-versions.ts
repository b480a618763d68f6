import type { Executor } from '../transaction.js';

/** What a change version names (migration 20261126020000_change_versions). */
export type ChangeVersionName = 'analytics_traffic' | 'analytics_products' | 'discovery_brands';

/** Marks `name` changed: in the transaction (or right after the statement) that changes it. */
export async function bumpChangeVersion(db: Executor, name: ChangeVersionName): Promise<void> {
  await db
    .updateTable('change_versions')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('name', '=', name)
    .execute();
}

/** Every change version by name. */
export async function readChangeVersions(db: Executor): Promise<Map<string, number>> {
  const rows = await db.selectFrom('change_versions').select(['name', 'version']).execute();
  return new Map(rows.map((r) => [r.name, Number(r.version)]));
}
