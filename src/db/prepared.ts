import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';

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

/**
 * A query whose shape depends only on a count (the rows of a multi-row insert, the ids of an
 * `in` list): built and compiled once per count and dialect, then run with new values.
 * `build` places value `i` of the flat list where it puts `slot(i)`; each call passes the
 * flat list, in that order. For the hot write paths (the webhook worker records every
 * delivery), where building and compiling cost more than SQLite's run of the statement.
 */
export function preparedBatchQuery<DB, R>(
  build: (db: Kysely<DB>, slot: (i: number) => never, count: number) => Compilable<R>,
): (db: Kysely<DB>, count: number, values: readonly unknown[]) => Promise<QueryResult<R>> {
  type Entry = { sql: CompiledQuery<R>; slots: (number | undefined)[] };
  const compiled = new Map<unknown, Map<number, Entry>>();
  return (db, count, values) => {
    const adapter = db.getExecutor().adapter.constructor;
    let byCount = compiled.get(adapter);
    if (!byCount) compiled.set(adapter, (byCount = new Map()));
    let entry = byCount.get(count);
    if (!entry) {
      const prefix = '\u0000prepared-value-';
      const sentinel = (i: number) => `${prefix}${i}` as never;
      const sql = build(db, sentinel, count).compile();
      // A parameter not from slot() (a constant the builder binds, such as null) keeps its value.
      const slots = sql.parameters.map((v) =>
        typeof v === 'string' && v.startsWith(prefix) ? Number(v.slice(prefix.length)) : undefined,
      );
      entry = { sql, slots };
      byCount.set(count, entry);
    }
    const { sql, slots } = entry;
    const parameters = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i];
      parameters[i] = slot === undefined ? sql.parameters[i] : values[slot];
    }
    return db.executeQuery<R>({ ...sql, parameters });
  };
}
