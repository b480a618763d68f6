import type { Compilable, CompiledQuery, Kysely } from 'kysely';

/**
 * A query built and compiled once, then run with new parameters: Kysely otherwise builds and
 * compiles the query tree on every call, which costs more than the SQLite read it runs on the
 * hot paths (a product by id, a key by hash). The builder receives sentinel parameters; the
 * compiled SQL keeps their places, and each call puts its own values there.
 */
export function preparedQuery<DB, P extends unknown[], R>(
  build: (db: Kysely<DB>, ...params: P) => Compilable<R>,
): (db: Kysely<DB>, ...params: P) => Promise<R[]> {
  // One compiled form per dialect adapter (SQLite and PostgreSQL place parameters differently).
  const compiled = new Map<unknown, { sql: CompiledQuery<R>; slots: (number | undefined)[] }>();
  return async (db, ...params) => {
    const adapter = db.getExecutor().adapter.constructor;
    let entry = compiled.get(adapter);
    if (!entry) {
      const sentinels = params.map((_, i) => `\u0000prepared-parameter-${i}\u0000`);
      const sql = build(db, ...(sentinels as P)).compile();
      const slots = sql.parameters.map((v) => {
        const i = sentinels.indexOf(v as string);
        return i >= 0 ? i : undefined;
      });
      entry = { sql, slots };
      compiled.set(adapter, entry);
    }
    const { sql, slots } = entry;
    const parameters = sql.parameters.map((v, i) =>
      slots[i] === undefined ? v : params[slots[i]!],
    );
    const result = await db.executeQuery<R>({ ...sql, parameters });
    return result.rows;
  };
}
