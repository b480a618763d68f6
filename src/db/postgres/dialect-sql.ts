import { PostgresAdapter, sql, type QueryExecutorProvider } from 'kysely';
import type { DialectSql } from '../dialect.js';
import { checkIdentifier } from '../identifier.js';
import { postgresMultiProcessSql } from './multi-process-sql.js';
import { pgProductJsonBlob } from './product-json.js';
import { isPgDerivedColumn, pgSearchGroups } from './product-search.js';

/** Whether a Kysely instance (or transaction) talks to PostgreSQL. */
export function isPostgres(db: QueryExecutorProvider): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** PostgreSQL's side of DialectSql. */
export const postgresSql: DialectSql = {
  name: 'postgres',
  // The wire protocol counts parameters in 16 bits.
  maxBindParameters: 65_535,
  dayOf: (column) => sql.raw<string>(`substr(${checkIdentifier('dayOf', column)}, 1, 10)`),
  // JSON text columns are text, not jsonb: cast, then ->>. The same text as the expression
  // of the products_discovery index, so the planner uses it.
  jsonMember: (column, key) =>
    sql.raw<string | null>(
      `(${checkIdentifier('jsonMember', column)}::jsonb ->> '${checkIdentifier('jsonMember', key)}')`,
    ),
  least: (...values) => sql<number>`least(${sql.join(values)})`,
  unindexed: (column) => sql.ref(checkIdentifier('unindexed', column)),
  productJson: pgProductJsonBlob,
  productPageJson: pgProductJsonBlob,
  searchGroups: pgSearchGroups,
  // The search index is an index: PostgreSQL keeps it, and a copy rebuilds it with the rows.
  isDerivedTable: () => false,
  isDerivedColumn: isPgDerivedColumn,
  rebuildDerived: async () => {},
  // Several processes on one store (issue 14, branch pgmulti).
  ...postgresMultiProcessSql,
};
