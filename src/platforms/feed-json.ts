import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { BOM, FeedFormatError, isObject, jsonFields, type RawRecord } from './feed-records.js';

/** Elements of a JSON array cut out of a text stream (see JsonArrayScanner). */
export async function* readJson(body: Readable): AsyncGenerator<RawRecord> {
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
