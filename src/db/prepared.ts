import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';

/**
 * Queries built and compiled once, then run with new values: Kysely otherwise builds and
 * compiles the query tree on every call, which costs more than the SQLite read or write it
 * runs on the hot paths (a product by id, a key by hash, a webhook attempt's record, a feed's
 * next page). The builder puts `slot(i)` where value `i` goes; the compiled SQL keeps those
 * places, and each run puts its own values there.
 */
const SLOT = '\u0000prepared-slot-';

/** The stand-in for value `i` of a run, for a query compiled by compileSlotted. */
export function slot(i: number): never {
  return `${SLOT}${i}\u0000` as never;
}

/** A compiled query and, for each parameter, the value it takes (undefined: a constant). */
export interface SlottedQuery<R> {
  sql: CompiledQuery<R>;
  slots: (number | undefined)[];
}

/** Compiles a query built with slot() stand-ins and finds where each value goes. */
export function compileSlotted<R>(query: Compilable<R>): SlottedQuery<R> {
  const sql = query.compile();
  // A parameter not from slot() (a constant the builder binds, such as null) keeps its value.
  const slots = sql.parameters.map((v) =>
    typeof v === 'string' && v.startsWith(SLOT) ? Number(v.slice(SLOT.length, -1)) : undefined,
  );
  return { sql, slots };
}

/** The compiled query with `values` in its slots. */
export function withValues<R>(
  { sql, slots }: SlottedQuery<R>,
  values: readonly unknown[],
): CompiledQuery<R> {
  const parameters = new Array<unknown>(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const at = slots[i];
    parameters[i] = at === undefined ? sql.parameters[i] : values[at];
  }
  return { ...sql, parameters };
}

/**
 * A query whose shape is fixed: compiled once per dialect adapter (SQLite and PostgreSQL
 * place parameters differently), run with the call's parameters.
 */
export function preparedQuery<DB, P extends unknown[], R>(
  build: (db: Kysely<DB>, ...params: P) => Compilable<R>,
): (db: Kysely<DB>, ...params: P) => Promise<R[]> {
  const compiled = new Map<unknown, SlottedQuery<R>>();
  return async (db, ...params) => {
    const adapter = db.getExecutor().adapter.constructor;
    let entry = compiled.get(adapter);
    if (!entry) {
      entry = compileSlotted(build(db, ...(params.map((_, i) => slot(i)) as unknown as P)));
      compiled.set(adapter, entry);
    }
    const result = await db.executeQuery<R>(withValues(entry, params));
    return result.rows;
  };
}

/**
 * A query whose shape depends only on a count (the rows of a multi-row insert, the ids of an
 * `in` list): compiled once per count and dialect adapter, then run with new values. `build`
 * places value `i` of the flat list where it puts `slot(i)`; each call passes the flat list,
 * in that order. For the hot write paths (the webhook worker records every delivery).
 */
export function preparedBatchQuery<DB, R>(
  build: (db: Kysely<DB>, slotOf: (i: number) => never, count: number) => Compilable<R>,
): (db: Kysely<DB>, count: number, values: readonly unknown[]) => Promise<QueryResult<R>> {
  const compiled = new Map<unknown, Map<number, SlottedQuery<R>>>();
  return (db, count, values) => {
    const adapter = db.getExecutor().adapter.constructor;
    let byCount = compiled.get(adapter);
    if (!byCount) compiled.set(adapter, (byCount = new Map()));
    let entry = byCount.get(count);
    if (!entry) {
      entry = compileSlotted(build(db, slot, count));
      byCount.set(count, entry);
    }
    return db.executeQuery<R>(withValues(entry, values));
  };
}
