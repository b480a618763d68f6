/**
 * The API's product JSON written by PostgreSQL: the same bytes as SQLite's fast path
 * (db/sqlite/product-json.ts) and the presenter (domain/products/present.ts, `apiProductOf`);
 * test/db/product-json.test.ts holds them equal on either store.
 */
import { sql, type RawBuilder } from 'kysely';
import { EXPONENTS } from '../../currencies.js';
import { productJsonText } from '../product-json-fields.js';

/**
 * The price as the API's JSON number from integer minor units: the exact decimal without
 * trailing zeros (trim_scale), 7990 USD -> 79.9, 500 JPY -> 500.
 */
const priceJson: RawBuilder<unknown> = (() => {
  const codesByExponent = new Map<number, string[]>();
  for (const [code, exponent] of Object.entries(EXPONENTS)) {
    codesByExponent.set(exponent, [...(codesByExponent.get(exponent) ?? []), code]);
  }
  const decimal = (exponent: number) =>
    exponent === 0
      ? 'price_minor::text'
      : `trim_scale(price_minor::numeric / ${10 ** exponent})::text`;
  const cases = [...codesByExponent].map(
    ([exponent, codes]) =>
      `when currency in (${codes.map((c) => `'${c}'`).join(', ')}) then ${decimal(exponent)}`,
  );
  // Built from the constant table above only: no outside text reaches this SQL.
  return sql.raw(`case ${cases.join(' ')} else ${decimal(2)} end`);
})();

/** A text column as a JSON string (to_json escapes as JSON.stringify does), or null. */
const quoted = (column: string) => sql.raw(`coalesce(to_json(${column})::text, 'null')`);
const productJson = productJsonText(quoted, priceJson);

/**
 * One product row as its API JSON, as text: bytea would travel hex-encoded, twice the bytes,
 * and a page of 250 cost three times as long (measured); the query layer makes it a Buffer.
 */
export const pgProductJsonBlob: RawBuilder<string> = productJson;
