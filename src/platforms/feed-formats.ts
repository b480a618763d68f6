import { Readable, Transform, pipeline, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parse as parseCsv } from 'csv-parse';
import { jsonNestsDeeperThan } from '../net/json-depth.js';
import { Pacer } from '../runtime/pace.js';
import { readJson } from './feed-json.js';
import {
  BOM,
  columnKey,
  FeedFormatError,
  isObject,
  jsonFields,
  MAX_FIELD_BYTES,
  MAX_ITEM_CHARS,
  MAX_JSON_DEPTH,
  oversizedField,
  sizeText,
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
export async function peekStream(
  body: Readable,
): Promise<{ head: string; bytes: Buffer; body: Readable }> {
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
    // A line end past some content (found in linear time: a feed's first line may be all of
    // a minified JSON document, and a backtracking search over it took seconds).
    if (chunk.includes(0x0a)) {
      const seen = Buffer.concat(chunks).toString('latin1');
      const content = seen.search(/\S/);
      if (content >= 0 && seen.indexOf('\n', content) >= 0) break;
    }
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
  return { head, bytes: headBuffer, body: whole };
}

// ---------------------------------------------------------------------------------------
// Readers

/** Reads a feed body of a known format as raw records, streaming (see `bounded`). */
export function readRecords(body: Readable, format: FeedFormat): AsyncIterable<RawRecord> {
  switch (format) {
    case 'csv':
      return bounded(readDelimited(body, ','));
    case 'tsv':
      return bounded(readDelimited(body, '\t'));
    case 'ndjson':
      return bounded(readNdjson(body));
    case 'json':
      return bounded(readJson(body));
    case 'xml':
      return bounded(readXml(body));
  }
}

/**
 * What every reader's records pass through: a record with a field over MAX_FIELD_BYTES is
 * refused alone, and the event loop gets a turn at least every SLICE_MS (runtime/pace.ts),
 * the reader and whoever consumes it between items together, so an API request never waits
 * long behind a sync reading a feed whose bytes are all in memory already (a fast local
 * server, a large chunk).
 */
async function* bounded(records: AsyncIterable<RawRecord>): AsyncGenerator<RawRecord> {
  const pacer = new Pacer();
  for await (const record of records) {
    const field = record.kind === 'record' ? oversizedField(record.fields) : undefined;
    if (field !== undefined)
      yield {
        kind: 'bad',
        position: record.position,
        reason: `the field "${field}" is over ${sizeText(MAX_FIELD_BYTES)}`,
      };
    else yield record;
    await pacer.turn();
  }
}

async function* readDelimited(body: Readable, delimiter: string): AsyncGenerator<RawRecord> {
  const bad: RawRecord[] = [];
  /** Keeps `bad` in line order (the size guard and the parser both add to it). */
  const addBad = (record: RawRecord) => {
    let at = bad.length;
    while (at > 0 && bad[at - 1]!.position > record.position) at--;
    // csv-parse may report one line twice; a line is one bad record.
    if (bad[at - 1]?.position === record.position) return;
    bad.splice(at, 0, record);
  };
  let truncated: FeedFormatError | undefined;
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
  parser.on('skip', (err: Error & { lines?: number; code?: string }) => {
    const position = err.lines ?? 0;
    if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
      truncated = new FeedFormatError(
        `the file ends inside a quoted value (line ${position}): the feed is cut short`,
      );
      return;
    }
    addBad({ kind: 'bad', position, reason: err.message });
  });
  const guard = new DelimitedRecordGuard(delimiter, MAX_ITEM_CHARS, (position) =>
    addBad({ kind: 'bad', position, reason: `the line is over ${sizeText(MAX_ITEM_CHARS)}` }),
  );
  pipeline(body, guard, parser, () => {});
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
  if (truncated) throw truncated;
}

/**
 * Passes a CSV or TSV stream on record by record, holding at most `max` bytes of one: a
 * record (a line, or several where a quoted value holds line ends) longer than that is let go
 * as it streams in and skipped to its end, and the parser gets as many empty lines in its
 * place (so that line numbers stay true) while `onRefused` names its first line. Quotes are
 * tracked as csv-parse reads them: one opens a value only at its start, `""` is a quote
 * inside a quoted value.
 */
export class DelimitedRecordGuard extends Transform {
  private readonly delimiter: number;
  /** Bytes of the record being read that are held (not yet passed on). */
  private held: Buffer[] = [];
  private heldBytes = 0;
  private inQuote = false;
  /** A quote inside a quoted value was the last byte seen: `""` or the value's end. */
  private quotePending = false;
  private atFieldStart = true;
  /** The record being read is over the cap: let go, skipped to its end. */
  private skipping = false;
  /** Line ends inside the record being read. */
  private recordLineEnds = 0;
  /** The line the record being read began on (1-based). */
  private recordLine = 1;

  constructor(
    delimiter: string,
    private readonly max: number,
    private readonly onRefused: (line: number) => void,
  ) {
    super();
    this.delimiter = delimiter.charCodeAt(0);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    /** Where the bytes of this chunk not yet passed on (nor dropped) begin. */
    let emitFrom = 0;
    /** Where the record being read begins in this chunk (0: before it). */
    let from = 0;
    const out: Buffer[] = [];
    const length = chunk.length;
    // Native searches (indexOf) over the bytes, not a loop over each: a 200 MB value costs
    // a few memchr passes, not 200 million steps of JavaScript.
    let i = 0;
    /** The next quote at or after `i` (-1: none left in the chunk), found once per quote. */
    let quoteAt = chunk.indexOf(0x22);
    const quoteFrom = (at: number) => {
      if (quoteAt >= 0 && quoteAt < at) quoteAt = chunk.indexOf(0x22, at);
      return quoteAt;
    };
    while (i < length) {
      if (this.quotePending) {
        this.quotePending = false;
        // `""` inside a quoted value is a quote; any other byte follows the value's end.
        if (chunk[i] === 0x22) {
          i++;
          continue;
        }
        this.inQuote = false;
      }
      if (this.inQuote) {
        const quote = quoteFrom(i);
        const stop = quote < 0 ? length : quote;
        this.recordLineEnds += countLineEnds(chunk, i, stop);
        if (quote < 0) break;
        this.quotePending = true;
        i = quote + 1;
        continue;
      }
      const lineEnd = chunk.indexOf(0x0a, i);
      const stop = lineEnd < 0 ? length : lineEnd;
      // A quote opens a value only at the value's start (after a delimiter, or the record's).
      let opens = -1;
      for (let q = quoteFrom(i); q >= 0 && q < stop; q = quoteFrom(q + 1)) {
        if (q === i ? this.atFieldStart : chunk[q - 1] === this.delimiter) {
          opens = q;
          break;
        }
      }
      if (opens >= 0) {
        this.inQuote = true;
        this.atFieldStart = false;
        i = opens + 1;
        continue;
      }
      if (lineEnd < 0) {
        if (length > i) this.atFieldStart = chunk[length - 1] === this.delimiter;
        break;
      }
      // The record ends here. Whole records go on in one piece per chunk.
      if (this.skipping) {
        out.push(Buffer.alloc(this.recordLineEnds + 1, 0x0a));
        this.skipping = false;
        emitFrom = lineEnd + 1;
      } else if (this.held.length > 0) {
        // Its start, held from earlier chunks, goes first; its rest is in this chunk's piece.
        out.push(...this.held);
        this.held = [];
      }
      this.heldBytes = 0;
      from = lineEnd + 1;
      i = lineEnd + 1;
      this.recordLine += this.recordLineEnds + 1;
      this.recordLineEnds = 0;
      this.atFieldStart = true;
    }
    if (from > emitFrom) out.push(chunk.subarray(emitFrom, from));
    if (!this.skipping) {
      const rest = chunk.subarray(from);
      if (this.heldBytes + rest.length > this.max) {
        // The header: without it no record can be read.
        if (this.recordLine === 1)
          return done(new FeedFormatError(`the header line is over ${sizeText(this.max)}`));
        this.refuse();
      } else if (rest.length > 0) {
        // A copy: the chunk may be a view of a larger buffer we should not keep alive.
        this.held.push(Buffer.from(rest));
        this.heldBytes += rest.length;
      }
    }
    for (const piece of out) if (piece.length > 0) this.push(piece);
    done();
  }

  private refuse(): void {
    this.held = [];
    this.heldBytes = 0;
    this.skipping = true;
    this.onRefused(this.recordLine);
  }

  override _flush(done: TransformCallback): void {
    if (this.skipping) {
      if (this.inQuote && !this.quotePending)
        return done(
          new FeedFormatError(
            `the file ends inside a quoted value (line ${this.recordLine}): the feed is cut short`,
          ),
        );
      this.push(Buffer.alloc(this.recordLineEnds + 1, 0x0a));
    } else for (const piece of this.held) this.push(piece);
    done();
  }
}

/** The line ends (LF) in `bytes` from `from` to `to`. */
function countLineEnds(bytes: Buffer, from: number, to: number): number {
  let count = 0;
  for (let at = bytes.indexOf(0x0a, from); at >= 0 && at < to; at = bytes.indexOf(0x0a, at + 1))
    count++;
  return count;
}

/**
 * NDJSON / JSON Lines, split by hand (node:readline holds a whole line, however long): a line
 * over MAX_ITEM_CHARS is let go as it streams in and refused alone. A last line without a
 * line end is read when it is whole JSON; when it is not, the file was cut short: the read
 * fails.
 */
async function* readNdjson(body: Readable): AsyncGenerator<RawRecord> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let skipping = false;
  let position = 0;
  function readLine(raw: string): RawRecord | undefined {
    let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (position === 1 && line.startsWith(BOM)) line = line.slice(1);
    if (line.trim() === '') return undefined;
    if (jsonNestsDeeperThan(line, MAX_JSON_DEPTH))
      return {
        kind: 'bad',
        position,
        reason: `the JSON nests deeper than ${MAX_JSON_DEPTH} levels`,
      };
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      return { kind: 'bad', position, reason: `not JSON: ${(err as Error).message}` };
    }
    if (!isObject(value)) return { kind: 'bad', position, reason: 'the line is not a JSON object' };
    return { kind: 'record', position, fields: jsonFields(value) };
  }
  const tooLong = (): RawRecord => ({
    kind: 'bad',
    position,
    reason: `the line is over ${sizeText(MAX_ITEM_CHARS)}`,
  });
  function* lines(text: string): Generator<RawRecord> {
    let from = 0;
    for (;;) {
      const end = text.indexOf('\n', from);
      if (end < 0) break;
      position++;
      const record = skipping ? tooLong() : readLine(pending + text.slice(from, end));
      skipping = false;
      pending = '';
      from = end + 1;
      if (record) yield record;
    }
    if (skipping) return;
    pending += text.slice(from);
    if (pending.length > MAX_ITEM_CHARS) {
      skipping = true;
      pending = '';
    }
  }
  for await (const chunk of body) yield* lines(decoder.write(chunk as Buffer));
  yield* lines(decoder.end());
  if (skipping) {
    position++;
    yield tooLong();
  } else if (pending.trim() !== '') {
    position++;
    const record = readLine(pending);
    if (record?.kind === 'bad' && record.reason.startsWith('not JSON'))
      throw new FeedFormatError(
        `the last line (line ${position}) has no line end and is not whole JSON: ` +
          'the feed is cut short',
      );
    if (record) yield record;
  }
}
