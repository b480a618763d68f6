import { createInterface } from 'node:readline';
import { Readable, pipeline } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parse as parseCsv } from 'csv-parse';
import { XMLParser } from 'fast-xml-parser';

/**
 * The formats a feed URL may serve, read as streams of raw records: each record is the
 * feed's own columns (names lower-cased, a `g:` prefix dropped), not yet our product.
 * feed-columns.ts maps a record to a product.
 *
 * - CSV / TSV: csv-parse, streaming.
 * - NDJSON / JSONL: a line reader (node:readline). The card named the `ndjson` package, but
 *   it cannot report a bad line and go on: in strict mode one bad line ends the stream, in
 *   lax mode the line disappears without a word. We report it as an item error instead.
 * - JSON (an array, or an object with `products` or `items`): a small scanner that cuts each
 *   element of that array out of the text as it streams by, then JSON.parse per element; the
 *   whole document is never held.
 * - XML (RSS 2.0 or Atom with the `g:` namespace, and our own export, which is RSS 2.0): each
 *   `<item>` / `<entry>` is cut out of the stream and parsed alone with fast-xml-parser
 *   (entities, CDATA, attributes), so memory holds one item, never the whole file.
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

const BOM = '\uFEFF';

// ---------------------------------------------------------------------------------------
// Sniffing

/** What the server says about the body: hints, used when the content itself is ambiguous. */
export interface FormatHints {
  contentType?: string | undefined;
  /** The URL's path (for its extension). */
  path?: string | undefined;
}

function hintedFormat(hints: FormatHints): FeedFormat | undefined {
  const type = (hints.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (/ndjson|jsonl|jsonlines|json-seq/.test(type)) return 'ndjson';
  if (/json/.test(type)) return 'json';
  if (/xml|rss|atom/.test(type)) return 'xml';
  if (/tab-separated/.test(type)) return 'tsv';
  if (/csv/.test(type)) return 'csv';
  const ext = /\.([a-z]+)$/i.exec(hints.path ?? '')?.[1]?.toLowerCase();
  switch (ext) {
    case 'ndjson':
    case 'jsonl':
      return 'ndjson';
    case 'json':
      return 'json';
    case 'xml':
    case 'rss':
    case 'atom':
      return 'xml';
    case 'tsv':
    case 'tab':
      return 'tsv';
    case 'csv':
      return 'csv';
    default:
      return undefined;
  }
}

/**
 * The format of a feed from its first bytes (`head`), with the Content-Type and the URL's
 * extension as hints where the content leaves it open (a JSON object whose first line is
 * cut off in `head`; a one-column text file).
 */
export function sniffFormat(head: string, hints: FormatHints = {}): FeedFormat {
  const hinted = hintedFormat(hints);
  const text = head.startsWith(BOM) ? head.slice(1) : head;
  const start = text.search(/\S/);
  if (start < 0) return hinted ?? 'csv';
  const first = text[start]!;
  if (first === '<') return 'xml';
  if (first === '[') return 'json';
  if (first === '{') {
    const end = text.indexOf('\n', start);
    if (end < 0) return hinted === 'ndjson' ? 'ndjson' : 'json';
    let value: unknown;
    try {
      value = JSON.parse(text.slice(start, end));
    } catch {
      // The first line is not a whole value: a JSON document spread over lines.
      return 'json';
    }
    if (isObject(value) && (Array.isArray(value.products) || Array.isArray(value.items)))
      return 'json';
    return 'ndjson';
  }
  const end = text.indexOf('\n', start);
  const line = text.slice(start, end < 0 ? undefined : end);
  const tabs = line.split('\t').length - 1;
  const commas = line.split(',').length - 1;
  if (tabs > 0 && tabs >= commas) return 'tsv';
  if (commas > 0) return 'csv';
  return hinted === 'tsv' ? 'tsv' : 'csv';
}

/** How much of the body sniffing looks at, at most. */
const HEAD_BYTES = 64 * 1024;

/**
 * Reads the first bytes of a stream (up to the first line end past some content, or
 * HEAD_BYTES), and gives them back with a stream of the whole body, those bytes included.
 */
export async function peekStream(body: Readable): Promise<{ head: string; body: Readable }> {
  const iterator = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < HEAD_BYTES) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    chunks.push(chunk);
    size += chunk.length;
    const text = chunk.toString('latin1');
    if (/\S[^\n]*\n/.test(Buffer.concat(chunks).toString('latin1')) && text.includes('\n')) break;
  }
  const headBuffer = Buffer.concat(chunks);
  const head = new StringDecoder('utf8').write(headBuffer);
  async function* rest(): AsyncGenerator<Buffer> {
    if (headBuffer.length > 0) yield headBuffer;
    if (done) return;
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      await iterator.return?.();
    }
  }
  const whole = Readable.from(rest(), { objectMode: false });
  // Destroying the combined stream (a reader stopped early) destroys the source too.
  whole.on('close', () => {
    if (!body.destroyed) body.destroy();
  });
  return { head, body: whole };
}

// ---------------------------------------------------------------------------------------
// Column names and values

/** `g:price` -> `price`, `Image Link` -> `image_link`: one spelling for every dialect. */
export function columnKey(name: string): string {
  return name
    .replace(/^\uFEFF/, '')
    .trim()
    .replace(/^g:/i, '')
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

function isObject(value: unknown): value is Record<string, unknown> {
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
  for (const [name, v] of Object.entries(value)) {
    if (isObject(v)) {
      // Our API's product shape keeps brand, url, gtin, ... in `attributes`.
      if (name === 'attributes')
        for (const [inner, iv] of Object.entries(v)) {
          const text = jsonFieldValue(iv);
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

// ---------------------------------------------------------------------------------------
// Readers

/** Reads a feed body of a known format as raw records, streaming. */
export function readRecords(body: Readable, format: FeedFormat): AsyncIterable<RawRecord> {
  switch (format) {
    case 'csv':
      return readDelimited(body, ',');
    case 'tsv':
      return readDelimited(body, '\t');
    case 'ndjson':
      return readNdjson(body);
    case 'json':
      return readJson(body);
    case 'xml':
      return readXml(body);
  }
}

async function* readDelimited(body: Readable, delimiter: string): AsyncGenerator<RawRecord> {
  const bad: RawRecord[] = [];
  const parser = parseCsv({
    delimiter,
    bom: true,
    columns: (header: string[]) => header.map(columnKey),
    relax_column_count: true,
    // Merchant Center's tab-separated files often carry quotes inside values.
    relax_quotes: delimiter === '\t',
    skip_empty_lines: true,
    skip_records_with_error: true,
    info: true,
  });
  parser.on('skip', (err: Error & { lines?: number }) => {
    const position = err.lines ?? 0;
    // csv-parse may report one line twice; a line is one bad record.
    if (bad.at(-1)?.position !== position) bad.push({ kind: 'bad', position, reason: err.message });
  });
  pipeline(body, parser, () => {});
  // Skips are reported as the parser meets them, ahead of the records it has buffered:
  // each waits for its place by line number.
  for await (const row of parser as AsyncIterable<{
    record: Record<string, string>;
    info: { lines: number };
  }>) {
    while (bad.length > 0 && bad[0]!.position < row.info.lines) yield bad.shift()!;
    const fields: RawFields = {};
    for (const [name, value] of Object.entries(row.record))
      if (name !== '' && typeof value === 'string') fields[name] = value;
    yield { kind: 'record', position: row.info.lines, fields };
  }
  while (bad.length > 0) yield bad.shift()!;
}

async function* readNdjson(body: Readable): AsyncGenerator<RawRecord> {
  body.setEncoding('utf8');
  const lines = createInterface({ input: body, crlfDelay: Infinity });
  let position = 0;
  try {
    for await (const raw of lines) {
      position++;
      const line = position === 1 && raw.startsWith(BOM) ? raw.slice(1) : raw;
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (err) {
        yield { kind: 'bad', position, reason: `not JSON: ${(err as Error).message}` };
        continue;
      }
      if (!isObject(value)) {
        yield { kind: 'bad', position, reason: 'the line is not a JSON object' };
        continue;
      }
      yield { kind: 'record', position, fields: jsonFields(value) };
    }
  } finally {
    lines.close();
  }
  // readline ends quietly when its input fails: say why the lines stopped.
  if (body.errored) throw body.errored;
}

/** Elements of a JSON array cut out of a text stream (see JsonArrayScanner). */
async function* readJson(body: Readable): AsyncGenerator<RawRecord> {
  const scanner = new JsonArrayScanner();
  const decoder = new StringDecoder('utf8');
  let position = 0;
  function* drain(elements: string[]): Generator<RawRecord> {
    for (const text of elements) {
      position++;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        yield { kind: 'bad', position, reason: `not JSON: ${(err as Error).message}` };
        continue;
      }
      if (!isObject(value)) yield { kind: 'bad', position, reason: 'the item is not an object' };
      else yield { kind: 'record', position, fields: jsonFields(value) };
    }
  }
  for await (const chunk of body) yield* drain(scanner.push(decoder.write(chunk as Buffer)));
  yield* drain(scanner.push(decoder.end()));
  scanner.finish();
}

/** Where a JSON string's content stops being plain: a quote or a backslash. */
const STRING_STOP = /["\\]/g;

/** Keys of a top-level object whose array holds the products. */
const ARRAY_KEYS = new Set(['products', 'items', 'entries', 'data']);

/**
 * Cuts the elements of the product array out of JSON text fed in pieces: the top-level
 * array, or the array under `products` (or `items`) of the top-level object. It tracks
 * only nesting and strings; each element is then parsed on its own.
 */
export class JsonArrayScanner {
  private buffer = '';
  /** Where scanning resumes in `buffer`. */
  private at = 0;
  /** Where the element being cut began in `buffer`, or -1. */
  private elementStart = -1;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The depth of the product array's elements (1 for a top-level array), once found. */
  private itemDepth = -1;
  private rootIsObject = false;
  private stringStart = -1;
  private lastString = '';
  private key = '';
  private started = false;
  private ended = false;
  private maxElement: number;
  /** Inside the product array (its elements are being cut). */
  private collecting = false;
  private isScalarString = false;

  constructor(maxElementChars = 16 * 1024 * 1024) {
    this.maxElement = maxElementChars;
  }

  push(text: string): string[] {
    if (!this.started) {
      if (text.startsWith(BOM)) text = text.slice(1);
      if (text.length > 0) this.started = true;
    }
    this.buffer += text;
    const out: string[] = [];
    const b = this.buffer;
    let i = this.at;
    for (; i < b.length; i++) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          continue;
        }
        // The bulk of a feed is string content: jump to the next quote or backslash.
        STRING_STOP.lastIndex = i;
        const stop = STRING_STOP.exec(b);
        if (!stop) {
          i = b.length;
          break;
        }
        i = stop.index;
        if (b.charCodeAt(i) === 0x5c) this.escaped = true;
        else {
          this.inString = false;
          if (this.rootIsObject && this.depth === 1 && this.stringStart >= 0)
            this.lastString = b.slice(this.stringStart, i);
          if (
            this.collecting &&
            this.depth === this.itemDepth &&
            this.elementStart >= 0 &&
            this.isScalarString
          )
            this.endElement(out, i + 1);
        }
        continue;
      }
      const c = b.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
      if (this.ended) throw new FeedFormatError('the JSON goes on after its end');
      if (
        this.collecting &&
        this.depth === this.itemDepth &&
        this.elementStart < 0 &&
        c !== 0x2c &&
        c !== 0x5d
      ) {
        this.elementStart = i;
        this.isScalarString = c === 0x22;
      }
      switch (c) {
        case 0x22: // "
          this.inString = true;
          this.stringStart = i + 1;
          break;
        case 0x7b: // {
        case 0x5b: // [
          if (this.depth === 0) {
            this.rootIsObject = c === 0x7b;
            if (!this.rootIsObject) {
              this.itemDepth = 1;
              this.collecting = true;
            }
          } else if (
            c === 0x5b &&
            this.depth === 1 &&
            this.rootIsObject &&
            this.itemDepth < 0 &&
            ARRAY_KEYS.has(this.key)
          ) {
            this.itemDepth = 2;
            this.collecting = true;
          }
          this.depth++;
          break;
        case 0x7d: // }
        case 0x5d: // ]
          this.depth--;
          if (this.depth < 0) throw new FeedFormatError('the JSON closes more than it opens');
          if (this.collecting && this.depth === this.itemDepth && this.elementStart >= 0)
            this.endElement(out, i + 1);
          else if (this.collecting && this.depth === this.itemDepth - 1) {
            // The product array's end (after a scalar element, maybe).
            if (this.elementStart >= 0) this.endElement(out, i);
            this.collecting = false;
          }
          if (this.depth === 0) this.ended = true;
          break;
        case 0x3a: // :
          if (this.depth === 1 && this.rootIsObject) this.key = this.lastString;
          break;
        case 0x2c: // ,
          if (this.collecting && this.depth === this.itemDepth && this.elementStart >= 0)
            this.endElement(out, i);
          break;
        default:
          if (this.depth === 0)
            throw new FeedFormatError('the JSON is not an array or an object of products');
      }
    }
    this.at = i;
    // Keep only what an unfinished element (or string key) still needs.
    const keepFrom = Math.min(
      this.elementStart >= 0 ? this.elementStart : this.at,
      this.inString && this.stringStart >= 0 ? this.stringStart - 1 : this.at,
    );
    if (keepFrom > 0) {
      this.buffer = this.buffer.slice(keepFrom);
      this.at -= keepFrom;
      if (this.elementStart >= 0) this.elementStart -= keepFrom;
      if (this.stringStart >= 0) this.stringStart -= keepFrom;
    }
    if (this.elementStart >= 0 && this.at - this.elementStart > this.maxElement)
      throw new FeedFormatError(`an item is over ${this.maxElement} characters`);
    return out;
  }

  private endElement(out: string[], end: number): void {
    const text = this.buffer.slice(this.elementStart, end).trim();
    if (text !== '') out.push(text);
    this.elementStart = -1;
    this.isScalarString = false;
  }

  /** Throws when the text ended early or held no product array. */
  finish(): void {
    if (!this.started) throw new FeedFormatError('the feed is empty');
    if (this.inString || this.depth > 0) throw new FeedFormatError('the JSON ends early');
    if (this.itemDepth < 0)
      throw new FeedFormatError(
        'the JSON holds no list of products (an array, or an object with "products" or "items")',
      );
  }
}

const xmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

const ITEM_START = /<((?:[A-Za-z_][\w.-]*:)?(?:item|entry|product))(?=[\s/>])/g;
const ITEM_START_ANY = /<((?:[A-Za-z_][\w.-]*:)?(?:item|entry|product))(?=[\s/>])/;
/** The longest single item we hold (a product with a very long description is far less). */
const MAX_XML_ITEM_CHARS = 8 * 1024 * 1024;

async function* readXml(body: Readable): AsyncGenerator<RawRecord> {
  const decoder = new StringDecoder('utf8');
  let buffer = '';
  /** Where the next item is looked for in `buffer` (what is before it is read). */
  let from = 0;
  let position = 0;
  let sawRoot = false;
  let ended = false;
  const source = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    const cut = cutXmlItem(buffer, from);
    if (cut) {
      from = cut.end;
      position++;
      if (cut.text === null) continue;
      let parsed: unknown;
      try {
        parsed = xmlParser.parse(cut.text, true);
      } catch (err) {
        yield { kind: 'bad', position, reason: `not well-formed XML: ${errorText(err)}` };
        continue;
      }
      const item = isObject(parsed) ? parsed[cut.tag] : undefined;
      yield { kind: 'record', position, fields: xmlFields(item) };
      continue;
    }
    if (ended) break;
    const next = await source.next();
    const text = next.done ? decoder.end() : decoder.write(next.value);
    if (next.done) ended = true;
    if (!sawRoot && /\S/.test(text)) {
      sawRoot = true;
      if (
        !text
          .replace(/^\uFEFF/, '')
          .trimStart()
          .startsWith('<')
      )
        throw new FeedFormatError('the feed is not XML');
    }
    // Drop what is read; keep the tail of a channel head that holds no item yet, in case a
    // start tag is cut between two chunks.
    buffer = buffer.slice(from) + text;
    from = 0;
    if (buffer.length > 65536 && buffer.search(ITEM_START_ANY) < 0) buffer = buffer.slice(-256);
    if (buffer.length > MAX_XML_ITEM_CHARS)
      throw new FeedFormatError(`an XML item is over ${MAX_XML_ITEM_CHARS} characters`);
  }
  if (!sawRoot) throw new FeedFormatError('the feed is empty');
  if (position === 0 && buffer.trim() !== '' && !/<(?:rss|feed|channel)[\s>]/.test(buffer))
    throw new FeedFormatError('the XML has no <item> or <entry> elements');
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The first whole item element in `text` from `from`: its tag, its text, and where it ends;
 * null when the item is not complete yet. CDATA sections and comments are skipped over, so
 * an `</item>` inside one does not end the item, and an `<item>` inside one is no item.
 */
function cutXmlItem(
  text: string,
  from: number,
): { tag: string; text: string | null; end: number } | null {
  ITEM_START.lastIndex = from;
  let match: RegExpExecArray | null;
  for (;;) {
    match = ITEM_START.exec(text);
    if (!match) return null;
    // A start tag inside a comment or CDATA section between the last item and this one.
    const gap = text.slice(from, match.index);
    const openComment = gap.lastIndexOf('<!--') > gap.lastIndexOf('-->');
    const openCdata = gap.lastIndexOf('<![CDATA[') > gap.lastIndexOf(']]>');
    if (!openComment && !openCdata) break;
    const close = text.indexOf(openComment ? '-->' : ']]>', match.index);
    if (close < 0) return null;
    ITEM_START.lastIndex = close;
  }
  const tag = match[1]!;
  const start = match.index;
  const close = `</${tag}`;
  // A self-closing item holds nothing.
  const tagEnd = text.indexOf('>', start + match[0].length);
  if (tagEnd < 0) return null;
  if (text[tagEnd - 1] === '/') return { tag, text: null, end: tagEnd + 1 };
  let i = tagEnd + 1;
  for (;;) {
    const lt = text.indexOf('<', i);
    if (lt < 0) return null;
    if (text.startsWith('<![CDATA[', lt)) {
      const end = text.indexOf(']]>', lt + 9);
      if (end < 0) return null;
      i = end + 3;
    } else if (text.startsWith('<!--', lt)) {
      const end = text.indexOf('-->', lt + 4);
      if (end < 0) return null;
      i = end + 3;
    } else if (text.startsWith(close, lt) && /[\s>]/.test(text[lt + close.length] ?? '')) {
      const end = text.indexOf('>', lt);
      if (end < 0) return null;
      return { tag, text: text.slice(start, end + 1), end: end + 1 };
    } else {
      if (lt + close.length + 1 > text.length) return null;
      i = lt + 1;
    }
  }
}

/** The text of one XML element value as fast-xml-parser gives it. */
function xmlText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isObject(value)) {
    // <link href="..."/> (Atom), <title type="text">x</title>
    if (typeof value['@_href'] === 'string') return value['@_href'];
    const inner = value['#text'];
    if (typeof inner === 'string' || typeof inner === 'number') return String(inner);
  }
  return undefined;
}

/**
 * An item's child elements as raw fields. `g:price` and `price` name the same column; the
 * `g:` one wins (an Atom entry's own `<id>` or `<title>` is second to Google's).
 */
function xmlFields(item: unknown): RawFields {
  const fields: RawFields = {};
  const rank: Record<string, number> = {};
  if (!isObject(item)) return fields;
  for (const [name, value] of Object.entries(item)) {
    if (name.startsWith('@_') || name === '#text') continue;
    const colon = name.indexOf(':');
    const prefix = colon < 0 ? '' : name.slice(0, colon).toLowerCase();
    const key = columnKey(colon < 0 ? name : name.slice(colon + 1));
    const weight = prefix === 'g' ? 3 : prefix === '' ? 2 : 1;
    if ((rank[key] ?? 0) >= weight) continue;
    let field: FieldValue | undefined;
    if (Array.isArray(value)) {
      // Atom's alternate link first; repeated elements (additional_image_link) in order.
      const texts = value.map(xmlText).filter((v): v is string => v !== undefined);
      if (key === 'link') {
        const alternate = value.find(
          (v) => isObject(v) && (v['@_rel'] ?? 'alternate') === 'alternate',
        );
        field = xmlText(alternate) ?? texts[0];
      } else field = texts;
    } else {
      field = xmlText(value);
    }
    if (field === undefined) continue;
    fields[key] = field;
    rank[key] = weight;
  }
  return fields;
}
