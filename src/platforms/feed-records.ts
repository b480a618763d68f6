/**
 * What every feed reader gives: raw records, the feed's own columns by a normalised name
 * (feed-formats.ts reads them, feed-columns.ts maps them to products).
 */

export const FEED_FORMATS = ['csv', 'tsv', 'json', 'ndjson', 'xml'] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];

export function isFeedFormat(value: unknown): value is FeedFormat {
  return typeof value === 'string' && (FEED_FORMATS as readonly string[]).includes(value);
}

/** A column's value: text, or several (repeated XML elements, JSON arrays). */
export type FieldValue = string | string[];

/** One record of the feed, by column name (lower case, prefix dropped). */
export type RawFields = Record<string, FieldValue>;

export type RawRecord =
  /** `position`: the line (CSV, TSV, NDJSON) or the 1-based item number (JSON, XML). */
  | { kind: 'record'; position: number; fields: RawFields }
  /** A record the format itself could not read (a line that is not JSON, say). */
  | { kind: 'bad'; position: number; reason: string };

/** A problem with the whole feed (not one record): the run cannot go on. */
export class FeedFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeedFormatError';
  }
}

export const BOM = '\uFEFF';

/**
 * The bounds every reader keeps, whatever the feed holds (CONTRACT part 8): a field over
 * MAX_FIELD_BYTES, an item over MAX_ITEM_CHARS or JSON nested deeper than MAX_JSON_DEPTH is
 * refused alone (a `bad` record), and is skipped as it streams by, never held whole.
 */
export const MAX_FIELD_BYTES = 1024 * 1024;
export const MAX_ITEM_CHARS = 8 * 1024 * 1024;
export const MAX_JSON_DEPTH = 64;

/** "1 MB": a byte count as a merchant reads it. */
export function sizeText(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`;
}

/** The name of the first field over MAX_FIELD_BYTES (UTF-8), or undefined. */
export function oversizedField(fields: RawFields): string | undefined {
  // Called for every record: no array of entries, and the UTF-8 length only for a text long
  // enough to be over (a character is at most 3 bytes of UTF-8 per UTF-16 unit).
  for (const name in fields) {
    const value = fields[name]!;
    if (typeof value === 'string') {
      if (value.length > MAX_FIELD_BYTES / 3 && Buffer.byteLength(value) > MAX_FIELD_BYTES)
        return name;
    } else {
      for (const text of value)
        if (text.length > MAX_FIELD_BYTES / 3 && Buffer.byteLength(text) > MAX_FIELD_BYTES)
          return name;
    }
  }
  return undefined;
}

/** `g:price` -> `price`, `Image Link` -> `image_link`: one spelling for every dialect. */
export function columnKey(name: string): string {
  // JSON and XML name every column of every record: the same few names, worked out once.
  let key = KEYS.get(name);
  if (key === undefined) {
    key = name
      .replace(/^\uFEFF/, '')
      .trim()
      .replace(/^g:/i, '')
      .toLowerCase()
      .replace(/[\s-]+/g, '_');
    if (KEYS.size < 4096) KEYS.set(name, key);
  }
  return key;
}

const KEYS = new Map<string, string>();

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON value as a column value: text, numbers and booleans written out; arrays of them. */
function jsonFieldValue(value: unknown): FieldValue | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    const texts: string[] = [];
    for (const v of value) {
      const text = jsonFieldValue(v);
      if (typeof text === 'string') texts.push(text);
    }
    return texts;
  }
  return undefined;
}

/** A JSON object as raw fields (nested `attributes` objects are lifted to the top). */
export function jsonFields(value: Record<string, unknown>): RawFields {
  const fields: RawFields = {};
  for (const name in value) {
    const v = value[name];
    if (isObject(v)) {
      // Our API's product shape keeps brand, url, gtin, ... in `attributes`.
      if (name === 'attributes')
        for (const inner in v) {
          const text = jsonFieldValue(v[inner]);
          const key = columnKey(inner);
          if (text !== undefined && !(key in fields)) fields[key] = text;
        }
      continue;
    }
    const text = jsonFieldValue(v);
    if (text !== undefined) fields[columnKey(name)] = text;
  }
  return fields;
}
