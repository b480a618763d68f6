import { sql, type RawBuilder } from 'kysely';

/**
 * The API's product JSON as one SQL text expression, in the presenter's field order
 * (domain/products/present.ts, `apiProductOf`), for the stores' fast paths
 * (db/sqlite/product-json.ts, db/postgres/product-json.ts). Each store gives how it quotes a
 * text column as a JSON string (or null) and how it prints the price; images and attributes
 * already hold the JSON text JSON.stringify wrote and go in as they are.
 */
export function productJsonText(
  quoted: (column: string) => RawBuilder<unknown>,
  priceJson: RawBuilder<unknown>,
  /** `concat`: one concat() call (SQLite 3.44+) instead of a chain of `||`; no piece may be NULL. */
  options: { concat?: boolean } = {},
): RawBuilder<string> {
  const fields: [name: string, json: RawBuilder<unknown>][] = [
    ['id', quoted('id')],
    ['name', quoted('name')],
    ['description', quoted('description')],
    ['price', priceJson],
    ['currency', quoted('currency')],
    ['status', quoted('status')],
    ['category', quoted('category')],
    ['images', sql.raw('images')],
    ['attributes', sql.raw('attributes')],
    ['created_at', quoted('created_at')],
    ['updated_at', quoted('updated_at')],
  ];
  const pieces = fields.flatMap(([name, json], i) => [
    sql.lit(`${i === 0 ? '{' : ','}"${name}":`),
    json,
  ]);
  pieces.push(sql.lit('}'));
  return options.concat
    ? sql<string>`concat(${sql.join(pieces, sql`, `)})`
    : sql<string>`${sql.join(pieces, sql` || `)}`;
}
