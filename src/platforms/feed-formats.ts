import { createInterface } from 'node:readline';
import { Readable, pipeline } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parse as parseCsv } from 'csv-parse';
import { readJson } from './feed-json.js';
import {
  BOM,
  columnKey,
  isObject,
  jsonFields,
  type FeedFormat,
  type RawFields,
  type RawRecord,
} from './feed-records.js';
import { readXml } from './feed-xml.js';

/**
 * The formats a feed URL may serve, read as streams of raw records: each record is the
 * feed's own columns (names lower-cased, a `g:` prefix dropped), not yet our product.
 * feed-columns.ts maps a record to a product.
 *
 * - CSV / TSV: csv-parse, streaming.
 * - NDJSON / JSONL: a line reader (node:readline). The card named the `ndjson` package, but
 *   it cannot report a bad line and go on: in strict mode one bad line ends the stream, in
 *   lax mode the line disappears without a word. We report it as an item error instead.
 * - JSON (feed-json.ts; an array, or an object with `products` or `items`): a scanner cuts each
 *   element of that array out of the text as it streams by, then JSON.parse per element; the
 *   whole document is never held.
 * - XML (feed-xml.ts; RSS 2.0 or Atom with the `g:` namespace, and our own export): each
 *   `<item>` / `<entry>` is cut out of the stream and parsed alone with fast-xml-parser
 *   (entities, CDATA, attributes), so memory holds one item, never the whole file.
 */

export {
  FEED_FORMATS,
  FeedFormatError,
  isFeedFormat,
  type FeedFormat,
  type FieldValue,
  type RawFields,
  type RawRecord,
} from './feed-records.js';

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
    // A column given twice (additional_image_link, say) keeps every value.
    group_columns_by_name: true,
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
    record: Record<string, string | string[]>;
    info: { lines: number };
  }>) {
    while (bad.length > 0 && bad[0]!.position < row.info.lines) yield bad.shift()!;
    const fields: RawFields = {};
    for (const [name, value] of Object.entries(row.record))
      if (name !== '' && (typeof value === 'string' || Array.isArray(value))) fields[name] = value;
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
