import { sql, type Kysely } from 'kysely';
import { dialectOf } from './dialect.js';
import { insertValuesInChunks } from './insert-in-chunks.js';
import { migrateToLatest } from './migrate.js';
import type { Database } from './schema.js';
import { openStoreAt, type Store } from './store.js';
import { findTextFault, showText, textProblem } from '../text.js';

/** Any table by name: the copy reads its table list from the schema, not from types. */
type AnyDb = Kysely<Record<string, Record<string, unknown>>>;

/**
 * Not copied: Kysely's own bookkeeping (each store has its own; both are migrated before the
 * copy), and the source's live processes (`workers`), which are not the target's.
 */
const NOT_COPIED = new Set(['kysely_migration', 'kysely_migration_lock', 'workers']);

export interface CopyProgress {
  table: string;
  /** Rows copied so far, all tables. */
  done: number;
  /** Rows to copy, all tables. */
  total: number;
}

export interface TableCount {
  table: string;
  source: number;
  target: number;
}

export interface CopyOptions {
  /** Empty a target that holds data instead of refusing it. */
  force?: boolean;
  /** Rows read and written per batch (default 2,000): what the copy holds in memory. */
  batchRows?: number;
  onProgress?: (progress: CopyProgress) => void;
  /** A table has been copied whole (written, not yet committed). */
  onTable?: (table: string, rows: number) => void;
}

export interface CopyResult {
  tables: TableCount[];
  rows: number;
}

/** The target holds data, and --force was not given. */
export class TargetNotEmptyError extends Error {
  constructor(readonly tables: string[]) {
    super(
      `the target store is not empty (${tables.join(', ')} hold rows); give --force to empty it first`,
    );
    this.name = 'TargetNotEmptyError';
  }
}

/** After the copy, a table's row count in the target differs from the source's. */
export class CopyMismatchError extends Error {
  constructor(readonly tables: TableCount[]) {
    const bad = tables.filter((t) => t.source !== t.target);
    super(
      `row counts differ after the copy: ${bad.map((t) => `${t.table} ${t.source} in the source, ${t.target} in the target`).join('; ')}; nothing was committed`,
    );
    this.name = 'CopyMismatchError';
  }
}

/**
 * A row the target cannot take: text a store cannot hold (U+0000 or a lone surrogate, which
 * SQLite stores of older versions may hold), or a write the target refused. Names the table
 * and the row by its primary key, in one line.
 */
export class CopyRowError extends Error {
  constructor(
    readonly table: string,
    /** The row's primary key, `id=prod_1` (several columns: `day=2026-01-01, product_id=p`). */
    readonly rowKey: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`table ${table}, row ${rowKey}: ${problem}; nothing was committed`, options);
    this.name = 'CopyRowError';
  }
}

/** A row's key as `column=value`s (text shown with refused characters escaped). */
function rowKeyOf(row: Record<string, unknown>, key: string[]): string {
  const columns = key.length > 0 ? key : Object.keys(row).slice(0, 1);
  return columns.map((c) => `${c}=${showText(String(row[c] ?? 'null'))}`).join(', ');
}

/** The first column of a row whose text the target could not hold, and why. */
function textFaultOfRow(
  row: Record<string, unknown>,
  columns: string[],
): { column: string; reason: string } | undefined {
  for (const column of columns) {
    const value = row[column];
    if (typeof value !== 'string') continue;
    const reason = textProblem(value);
    if (reason) return { column, reason };
    // JSON held as text (SQLite) goes into a jsonb column (PostgreSQL), which cannot hold a
    // \u0000 escape: JSON whose parsed text a store cannot hold is refused alike.
    if ((value.startsWith('{') || value.startsWith('[')) && value.includes('\\u')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        continue;
      }
      const fault = findTextFault(parsed);
      if (fault)
        return { column: `${column} (at ${fault.field || 'the top'})`, reason: fault.reason };
    }
  }
  return undefined;
}

/** Tables in an order where every table comes after the tables its foreign keys reference. */
export function orderByForeignKeys(tables: string[], parents: Map<string, string[]>): string[] {
  const ordered: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (table: string) => {
    if (state.get(table) === 'done' || state.get(table) === 'visiting') return;
    state.set(table, 'visiting');
    for (const parent of parents.get(table) ?? []) {
      if (parent !== table && tables.includes(parent)) visit(parent);
    }
    state.set(table, 'done');
    ordered.push(table);
  };
  for (const table of [...tables].sort()) visit(table);
  return ordered;
}

/**
 * The store's tables and their columns, from the database's own catalogue; not the tables
 * derived from others (the search index), which the copy fills again from the copied rows,
 * nor the columns the store computes (PostgreSQL's search vector), which the target computes.
 */
async function tablesOf(db: Kysely<Database>): Promise<Map<string, string[]>> {
  const tables = await db.introspection.getTables();
  const derived = dialectOf(db);
  return new Map(
    tables
      .filter((t) => !t.isView && !NOT_COPIED.has(t.name) && !derived.isDerivedTable(t.name))
      .map((t) => [
        t.name,
        t.columns.map((c) => c.name).filter((c) => !derived.isDerivedColumn(t.name, c)),
      ]),
  );
}

async function countRows(db: AnyDb, table: string): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select(sql<number | string>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * What a freshly migrated store holds (migrations write a few rows: counters at zero, the
 * pipeline lock's row): a target holding no more than this is empty. Measured on a migrated
 * in-memory SQLite store, so it follows the migrations without a list to keep.
 */
async function freshCounts(): Promise<Map<string, number>> {
  const fresh = openStoreAt({ dialect: 'sqlite', file: ':memory:' });
  try {
    await migrateToLatest(fresh.db);
    const counts = new Map<string, number>();
    for (const table of (await tablesOf(fresh.db)).keys()) {
      counts.set(table, await countRows(fresh.db as unknown as AnyDb, table));
    }
    return counts;
  } finally {
    await fresh.close();
  }
}

/**
 * Copies every table of `source` to `target` (another store, SQLite or PostgreSQL, of the
 * same schema): both are migrated first; the source is read in one snapshot (a live store
 * goes on serving; the copy is of one moment), streamed in batches so memory stays flat in
 * the catalogue's size, and written in one transaction on the target, so a copy that fails
 * (or whose row counts do not match at the end) leaves the target as it was. Triggers are
 * off while the rows go in (counters are copied as they are), identity sequences continue
 * after the copied ids, and a target holding data is refused unless `force` empties it.
 */
export async function copyStore(
  source: Store,
  target: Store,
  options: CopyOptions = {},
): Promise<CopyResult> {
  const batchRows = options.batchRows ?? 2_000;
  await migrateToLatest(source.db);
  await migrateToLatest(target.db);
  const sourceTables = await tablesOf(source.db);
  const targetTables = await tablesOf(target.db);
  const missing = [...sourceTables.keys()].filter((t) => !targetTables.has(t));
  if (missing.length > 0) {
    throw new Error(`the target store has no table ${missing.join(', ')}: its schema differs`);
  }
  const order = orderByForeignKeys(
    [...sourceTables.keys()],
    await dialectOf(target.db).foreignKeyParents(target.db),
  );
  const empty = await freshCounts();
  const keys = await dialectOf(source.db).primaryKeys(source.db);

  const reader = source.openReader();
  try {
    return await reader
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (snapshot) => {
        const snap = snapshot as unknown as AnyDb;
        // A copy reads each table in one statement for as long as it takes.
        await dialectOf(snapshot).allowLongStatements(snapshot);
        const sourceCounts = new Map<string, number>();
        for (const table of order) sourceCounts.set(table, await countRows(snap, table));
        const total = [...sourceCounts.values()].reduce((a, b) => a + b, 0);
        return target.db.transaction().execute(async (trx) => {
          const out = trx as unknown as AnyDb;
          await dialectOf(trx).allowLongStatements(trx);
          const held: string[] = [];
          for (const table of order) {
            if ((await countRows(out, table)) > (empty.get(table) ?? 0)) held.push(table);
          }
          if (held.length > 0 && !options.force) throw new TargetNotEmptyError(held);
          const restoreTriggers = await dialectOf(trx).suspendTriggers(trx);
          for (const table of [...order].reverse()) await out.deleteFrom(table).execute();
          let done = 0;
          options.onProgress?.({ table: order[0] ?? '', done, total });
          for (const table of order) {
            const columns = sourceTables.get(table)!;
            const key = keys.get(table) ?? [];
            let firstKey = '';
            const write = async (rows: unknown[][]) => {
              try {
                await insertValuesInChunks(trx, table as keyof Database, columns as never, rows);
              } catch (err) {
                // One line for the operator: the table, the batch's first row and the reason.
                const reason = showText(err instanceof Error ? err.message : String(err));
                throw new CopyRowError(table, `${firstKey} (or one after it)`, reason, {
                  cause: err,
                });
              }
              done += rows.length;
              options.onProgress?.({ table, done, total });
            };
            let batch: unknown[][] = [];
            for await (const row of snap.selectFrom(table).select(columns).stream(batchRows)) {
              // Checked on every store: the same copy succeeds or fails alike whatever the target.
              const fault = textFaultOfRow(row, columns);
              if (fault) {
                throw new CopyRowError(
                  table,
                  rowKeyOf(row, key),
                  `column ${fault.column} ${fault.reason}`,
                );
              }
              if (batch.length === 0) firstKey = rowKeyOf(row, key);
              batch.push(columns.map((c) => row[c] ?? null));
              if (batch.length >= batchRows) {
                await write(batch);
                batch = [];
              }
            }
            if (batch.length > 0) await write(batch);
            await dialectOf(trx).continueSequences(trx, table);
            options.onTable?.(table, sourceCounts.get(table)!);
          }
          // The search index follows products by triggers, which were off: filled at once.
          await dialectOf(trx).rebuildDerived(trx);
          await restoreTriggers();
          const tables: TableCount[] = [];
          for (const table of order) {
            tables.push({
              table,
              source: sourceCounts.get(table)!,
              target: await countRows(out, table),
            });
          }
          if (tables.some((t) => t.source !== t.target)) throw new CopyMismatchError(tables);
          return { tables, rows: done };
        });
      });
  } finally {
    await reader.destroy();
  }
}
