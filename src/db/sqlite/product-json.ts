/**
 * The API's product JSON written by SQLite, for speed: the presenter
 * (domain/products/present.ts, `apiProductOf`) owns the JSON; this writes the same bytes.
 * test/db/sqlite/product-json.test.ts holds the two equal for generated products.
 */
import { sql, type RawBuilder } from 'kysely';
import { EXPONENTS } from '../../currencies.js';
import { productJsonText } from '../product-json-fields.js';

/**
 * The price as the API's JSON number, from integer minor units: the exact decimal without
 * trailing zeros (7990 USD -> 79.9, 500 JPY -> 500). Prices have at most 15 significant
 * digits (money.ts), so this is also what JavaScript prints for the same number.
 */
const priceJson: RawBuilder<unknown> = (() => {
  const decimal = (exponent: number) =>
    `rtrim(rtrim(printf('%d.%0${exponent}d', price_minor / ${10 ** exponent}, price_minor % ${10 ** exponent}), '0'), '.')`;
  const codesByExponent = new Map<number, string[]>();
  for (const [code, exponent] of Object.entries(EXPONENTS)) {
    codesByExponent.set(exponent, [...(codesByExponent.get(exponent) ?? []), code]);
  }
  // instr() in a constant list, not `in (...)`: SQLite builds a lookup table for every run of
  // a statement with an IN list, which costs more than the rest of a by-id read.
  const cases = [...codesByExponent].map(
    ([exponent, codes]) =>
      `when instr(',${codes.join(',')},', ',' || currency || ',') then ${exponent === 0 ? 'price_minor' : decimal(exponent)}`,
  );
  // Built from the constant table above only: no outside text reaches this SQL.
  return sql.raw(`case ${cases.join(' ')} else ${decimal(2)} end`);
})();

/**
 * A product as the API returns it (`apiProductOf`), written as JSON by the database: byte
 * for byte what `JSON.stringify(apiProductOf(readStoredProduct(row)))` gives (a property test holds the two
 * together). Reads send it as it comes, as a blob: no twelve columns turned into JavaScript
 * strings, no JSON.parse of images and attributes, no JSON.stringify. Serialising a page of
 * 250 costs a third of what it did. Strings go through json_quote, which escapes as
 * JSON.stringify does; images and attributes already hold the JSON text JSON.stringify
 * wrote, and are put in as they are (json_object would parse and re-render them).
 * PostgreSQL has to_json for json_quote.
 */
const quoted = (column: string) => sql.raw(`json_quote(${column})`);
// One concat() of the 23 pieces: a chain of || copies the growing text at every step (a
// page of 250 spent a quarter of its SQL time there). No piece is NULL (json_quote(NULL) is
// 'null'; the price, images and attributes are NOT NULL), so concat() skipping NULLs changes
// nothing.
const productJson = productJsonText(quoted, priceJson, { concat: true });

/** One product row (the `products` columns in scope) as its API JSON, a UTF-8 blob. */
export const productJsonBlob: RawBuilder<Buffer> = sql<Buffer>`cast(${productJson} as blob)`;

/**
 * One product row as its API JSON, as text: a page joins 250 of them in JavaScript (cheaper
 * than 250 Buffers, and than group_concat's sort of the whole texts).
 */
export const productJsonString: RawBuilder<string> = productJson;
