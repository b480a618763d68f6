import {
  sql,
  type CompiledQuery,
  type InsertQueryBuilder,
  type Insertable,
  type Kysely,
} from 'kysely';
import { dialectOf } from './dialect.js';
import type { Database } from './schema.js';

export interface InsertInChunksOptions {
  /**
   * Rows per statement at most (default 1,000). Fewer, wider statements are not faster past a
   * few hundred rows, and a statement's text is kept for reuse (see below).
   */
  maxRows?: number;
  /** Overrides the dialect's limit on bound parameters (tests use a small one). */
  maxBindParameters?: number;
}

/**
 * Inserts rows with multi-row INSERTs, as many rows a statement as the database's limit on
 * bound parameters allows (one parameter a column a row). Runs on the executor it is given:
 * pass a transaction for all-or-nothing. Returns how many rows were inserted.
 *
 * Building the statement for hundreds of rows costs about as much as the database takes to
 * insert them, and a full chunk of rows with the same columns is the same text every time: it
 * is compiled once per dialect, table, columns and size, and reused with new values.
 */
export async function insertInChunks<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  rows: readonly Insertable<Database[T]>[],
  options: InsertInChunksOptions = {},
): Promise<number> {
  if (rows.length === 0) return 0;
  const columns = columnsOf(rows);
  const maxParams = options.maxBindParameters ?? dialectOf(db).maxBindParameters;
  if (columns.length > maxParams) {
    throw new Error(
      `insertInChunks(${table}): a row has ${columns.length} columns, more than the ${maxParams} bound parameters a statement may carry`,
    );
  }
  const perStatement = rowsPerStatement(columns.length, maxParams, options);
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const reusable = chunk.length === perStatement && sameColumns(chunk, columns);
    const compiled = reusable
      ? reusableStatement(db, table, columns, perStatement, () => chunk)
      : undefined;
    if (compiled) {
      await db.executeQuery({ ...compiled, parameters: flatValues(chunk, columns) });
    } else {
      await db
        .insertInto(table)
        .values(chunk as never)
        .execute();
    }
  }
  return rows.length;
}

/**
 * insertInChunks for rows already laid out as values in the order of `columns`, each one the
 * driver binds as is (no undefined, no SQL expressions): no object a row, no check a row. For
 * writers on a hot path (the audit log's thread).
 */
export async function insertValuesInChunks<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  rows: readonly (readonly unknown[])[],
  options: InsertInChunksOptions = {},
): Promise<number> {
  if (rows.length === 0) return 0;
  const names = columns as readonly string[];
  const maxParams = options.maxBindParameters ?? dialectOf(db).maxBindParameters;
  const perStatement = rowsPerStatement(names.length, maxParams, options);
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    const compiled =
      chunk.length === perStatement
        ? reusableStatement(db, table, names, perStatement, () => objectsOf(chunk, names))
        : undefined;
    if (compiled) {
      await db.executeQuery({ ...compiled, parameters: chunk.flat() });
    } else {
      await db
        .insertInto(table)
        .values(objectsOf(chunk, names) as never)
        .execute();
    }
  }
  return rows.length;
}

function rowsPerStatement(
  columnCount: number,
  maxParams: number,
  options: InsertInChunksOptions,
): number {
  return Math.max(1, Math.min(options.maxRows ?? 1000, Math.floor(maxParams / columnCount)));
}

function objectsOf(rows: readonly (readonly unknown[])[], columns: readonly string[]): object[] {
  return rows.map((values) => Object.fromEntries(columns.map((c, i) => [c, values[i]])));
}

/** Every column any row names, in first-seen order (Kysely inserts their union). */
function columnsOf(rows: readonly object[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}

function sameColumns(rows: readonly object[], columns: string[]): boolean {
  return rows.every((row) => {
    const keys = Object.keys(row);
    return (
      keys.length === columns.length &&
      keys.every((k, i) => k === columns[i] && isPlainValue((row as Record<string, unknown>)[k]))
    );
  });
}

/** A value the driver binds as is (not undefined, not an expression Kysely turns into SQL). */
function isPlainValue(v: unknown): boolean {
  return v === null || (v !== undefined && (typeof v !== 'object' || Buffer.isBuffer(v)));
}

function flatValues(rows: readonly object[], columns: readonly string[]): unknown[] {
  const out = new Array<unknown>(rows.length * columns.length);
  let n = 0;
  for (const row of rows) for (const c of columns) out[n++] = (row as Record<string, unknown>)[c];
  return out;
}

// Keyed by the dialect's adapter class: SQLite and PostgreSQL write parameters differently.
const statements = new Map<unknown, Map<string, CompiledQuery | null>>();

/**
 * The compiled statement for a full chunk, or undefined when its parameters are not simply the
 * rows' values in order (a value Kysely turns into SQL, such as a raw expression).
 */
function reusableStatement(
  db: Kysely<Database>,
  table: string,
  columns: readonly string[],
  size: number,
  sample: () => readonly object[],
  variant?: StatementVariant,
): CompiledQuery | undefined {
  const adapter = db.getExecutor().adapter.constructor;
  let byShape = statements.get(adapter);
  if (!byShape) statements.set(adapter, (byShape = new Map()));
  const key = `${table}\u0000${size}\u0000${columns.join('\u0000')}${variant ? `\u0001${variant.key}` : ''}`;
  let compiled = byShape.get(key);
  if (compiled === undefined) {
    const chunk = sample();
    const insert = db.insertInto(table as keyof Database).values(chunk as never);
    const built = (variant ? variant.build(insert) : insert).compile();
    const values = flatValues(chunk, columns);
    const plain =
      built.parameters.length === values.length &&
      built.parameters.every((p, i) => Object.is(p, values[i]));
    compiled = plain ? built : null;
    byShape.set(key, compiled);
  }
  return compiled ?? undefined;
}

/** What a statement adds to a plain multi-row INSERT, and a key naming it. */
interface StatementVariant {
  key: string;
  build(
    insert: InsertQueryBuilder<Database, keyof Database, object>,
  ): InsertQueryBuilder<Database, keyof Database, object>;
}

/** A conflict on a unique key: skip the row, or add its counts to the stored row's. */
export interface OnConflict {
  /** The unique key's columns. */
  columns: readonly string[];
  /** The unique index is partial: only rows where this column is not null are in it. */
  whereNotNull?: string;
  /** Add these columns to the stored row's (`t.c = t.c + excluded.c`); absent: do nothing. */
  add?: readonly string[];
  /** Return this column of every row inserted (not of rows skipped). */
  returning?: string;
}

/**
 * insertValuesInChunks with an ON CONFLICT clause (standard in SQLite and PostgreSQL), and
 * RETURNING when asked: `returned` holds the returned column of each inserted row, in no
 * particular order; `affected` counts the rows inserted or updated (the rows returned, with
 * RETURNING). Every statement is one of a few sizes (full chunks, then the rest as powers of
 * two), so each is compiled once and prepared once however the batches vary.
 */
export async function upsertValuesInChunks<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  rows: readonly (readonly unknown[])[],
  conflict: OnConflict,
  options: InsertInChunksOptions = {},
): Promise<{ returned: unknown[]; affected: number }> {
  const returned: unknown[] = [];
  let affected = 0;
  if (rows.length === 0) return { returned, affected };
  const names = columns as readonly string[];
  const maxParams = options.maxBindParameters ?? dialectOf(db).maxBindParameters;
  const perStatement = rowsPerStatement(names.length, maxParams, options);
  const variant: StatementVariant = {
    key: JSON.stringify(conflict),
    build: (insert) => {
      const q = insert.onConflict((oc) => {
        let target = oc.columns(conflict.columns as never);
        if (conflict.whereNotNull)
          target = target.where(conflict.whereNotNull as never, 'is not', null);
        if (!conflict.add) return target.doNothing();
        return target.doUpdateSet(
          Object.fromEntries(
            conflict.add.map((c) => [
              c,
              sql`${sql.ref(`${table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`,
            ]),
          ) as never,
        );
      });
      return conflict.returning ? (q.returning(conflict.returning as never) as never) : q;
    },
  };
  for (let i = 0; i < rows.length;) {
    const left = rows.length - i;
    // A full chunk, or the largest power of two that fits in what is left.
    const size = left >= perStatement ? perStatement : 2 ** Math.floor(Math.log2(left));
    const chunk = rows.slice(i, i + size);
    i += size;
    const compiled = reusableStatement(
      db,
      table,
      names,
      size,
      () => objectsOf(chunk, names),
      variant,
    );
    const result = compiled
      ? await db.executeQuery({ ...compiled, parameters: chunk.flat() })
      : await db.executeQuery(
          variant
            .build(
              db
                .insertInto(table as keyof Database)
                .values(objectsOf(chunk, names) as never) as never,
            )
            .compile(),
        );
    if (conflict.returning) {
      for (const row of result.rows as Record<string, unknown>[])
        returned.push(row[conflict.returning]);
      affected += result.rows.length;
    } else affected += Number(result.numAffectedRows ?? 0);
  }
  return { returned, affected };
}
