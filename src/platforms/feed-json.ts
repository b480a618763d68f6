import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import {
  BOM,
  FeedFormatError,
  isObject,
  jsonFields,
  MAX_FIELD_BYTES,
  MAX_ITEM_CHARS,
  MAX_JSON_DEPTH,
  sizeText,
  type RawRecord,
} from './feed-records.js';

/** Elements of a JSON array cut out of a text stream (see JsonArrayScanner). */
export async function* readJson(body: Readable): AsyncGenerator<RawRecord> {
  const scanner = new JsonArrayScanner();
  const decoder = new StringDecoder('utf8');
  let position = 0;
  function* drain(elements: JsonElement[]): Generator<RawRecord> {
    for (const element of elements) {
      position++;
      if (typeof element !== 'string') {
        yield { kind: 'bad', position, reason: element.refused };
        continue;
      }
      let value: unknown;
      try {
        value = JSON.parse(element);
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

/** One element cut out: its text, or why it was refused (it was skipped, not held). */
export type JsonElement = string | { refused: string };

/** Where a JSON string's content stops being plain: a quote or a backslash. */
const STRING_STOP = /["\\]/g;

/** Keys of a top-level object whose array holds the products. */
const ARRAY_KEYS = new Set(['products', 'items', 'entries', 'data']);

/** The longest key of the top-level object remembered (the array's key is a short word). */
const MAX_KEY_CHARS = 1024;

export interface JsonScannerLimits {
  /** An element longer than this (characters) is refused (default MAX_ITEM_CHARS). */
  maxElementChars?: number;
  /** A string inside an element longer than this (characters) refuses it (MAX_FIELD_BYTES). */
  maxStringChars?: number;
  /** Nesting inside an element deeper than this refuses it (default MAX_JSON_DEPTH). */
  maxDepth?: number;
}

/**
 * Cuts the elements of the product array out of JSON text fed in pieces: the top-level
 * array, or the array under `products` (or `items`) of the top-level object. It tracks
 * only nesting and strings; each element is then parsed on its own. An element nested too
 * deep, with too long a string, or too long itself is refused: the scanner stops holding it
 * at once, skips to its end, and gives `{refused}` in its place. Positions are counted in
 * the whole text (`dropped` characters are behind the buffer), so nothing needs the text
 * that was let go.
 */
export class JsonArrayScanner {
  private buffer = '';
  /** Characters let go from the front of the text: buffer[0] is character `dropped`. */
  private dropped = 0;
  /** Where scanning resumes (absolute). */
  private at = 0;
  /** Where the element being cut began (absolute), or -1 between elements. */
  private elementStart = -1;
  /** Why the element being cut is refused (it is skipped, not held), or null. */
  private refusal: string | null = null;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Where the current string's content began (absolute), or -1. */
  private stringStart = -1;
  /** The depth of the product array's elements (1 for a top-level array), once found. */
  private itemDepth = -1;
  private rootIsObject = false;
  private lastString = '';
  private key = '';
  private started = false;
  private ended = false;
  /** Inside the product array (its elements are being cut). */
  private collecting = false;
  private isScalarString = false;
  /** Elements given so far. */
  private count = 0;
  private readonly maxElement: number;
  private readonly maxString: number;
  private readonly maxDepth: number;

  constructor(limits: JsonScannerLimits = {}) {
    this.maxElement = limits.maxElementChars ?? MAX_ITEM_CHARS;
    this.maxString = limits.maxStringChars ?? MAX_FIELD_BYTES;
    this.maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  }

  push(text: string): JsonElement[] {
    if (!this.started) {
      if (text.startsWith(BOM)) text = text.slice(1);
      if (text.length > 0) this.started = true;
    }
    this.buffer += text;
    const out: JsonElement[] = [];
    const b = this.buffer;
    const base = this.dropped;
    let i = this.at - base;
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
          const length = base + i - this.stringStart;
          if (this.rootIsObject && this.depth === 1)
            this.lastString =
              length <= MAX_KEY_CHARS && this.stringStart >= base
                ? b.slice(this.stringStart - base, i)
                : '';
          if (this.elementStart >= 0 && length > this.maxString)
            this.refuse(`a text is over ${sizeText(this.maxString)}`);
          if (
            this.collecting &&
            this.depth === this.itemDepth &&
            this.elementStart >= 0 &&
            this.isScalarString
          )
            this.endElement(out, base + i + 1);
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
        this.elementStart = base + i;
        this.isScalarString = c === 0x22;
      }
      switch (c) {
        case 0x22: // "
          this.inString = true;
          this.stringStart = base + i + 1;
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
          if (this.elementStart >= 0 && this.depth - this.itemDepth > this.maxDepth)
            this.refuse(`the JSON nests deeper than ${this.maxDepth} levels`);
          break;
        case 0x7d: // }
        case 0x5d: // ]
          this.depth--;
          if (this.depth < 0) throw new FeedFormatError('the JSON closes more than it opens');
          if (this.collecting && this.depth === this.itemDepth && this.elementStart >= 0)
            this.endElement(out, base + i + 1);
          else if (this.collecting && this.depth === this.itemDepth - 1) {
            // The product array's end (after a scalar element, maybe).
            if (this.elementStart >= 0) this.endElement(out, base + i);
            this.collecting = false;
          }
          if (this.depth === 0) this.ended = true;
          break;
        case 0x3a: // :
          if (this.depth === 1 && this.rootIsObject) this.key = this.lastString;
          break;
        case 0x2c: // ,
          if (this.collecting && this.depth === this.itemDepth && this.elementStart >= 0)
            this.endElement(out, base + i);
          break;
        default:
          if (this.depth === 0)
            throw new FeedFormatError('the JSON is not an array or an object of products');
      }
    }
    this.at = base + i;
    if (this.elementStart >= 0 && this.refusal === null) {
      if (this.inString && this.at - this.stringStart > this.maxString)
        this.refuse(`a text is over ${sizeText(this.maxString)}`);
      else if (this.at - this.elementStart > this.maxElement)
        this.refuse(`the item is over ${sizeText(this.maxElement)}`);
    }
    // Keep only what an unfinished element (or a key of the top-level object) still needs.
    let keepFrom = this.at;
    if (this.elementStart >= 0 && this.refusal === null) keepFrom = this.elementStart;
    else if (
      this.inString &&
      this.rootIsObject &&
      this.depth === 1 &&
      this.at - this.stringStart <= MAX_KEY_CHARS
    )
      keepFrom = this.stringStart - 1;
    keepFrom = Math.max(keepFrom, this.dropped);
    if (keepFrom > this.dropped) {
      this.buffer = this.buffer.slice(keepFrom - this.dropped);
      this.dropped = keepFrom;
    }
    return out;
  }

  /** The element being cut is refused: it is let go at once and skipped to its end. */
  private refuse(reason: string): void {
    if (this.refusal === null) this.refusal = reason;
  }

  private endElement(out: JsonElement[], end: number): void {
    if (end - this.elementStart > this.maxElement)
      this.refuse(`the item is over ${sizeText(this.maxElement)}`);
    if (this.refusal !== null) out.push({ refused: this.refusal });
    else {
      const text = this.buffer.slice(this.elementStart - this.dropped, end - this.dropped).trim();
      if (text !== '') out.push(text);
    }
    this.count++;
    this.elementStart = -1;
    this.refusal = null;
    this.isScalarString = false;
  }

  /** Throws when the text ended early (the feed is cut short) or held no product array. */
  finish(): void {
    if (!this.started) throw new FeedFormatError('the feed is empty');
    if (this.collecting)
      throw new FeedFormatError(
        `the JSON ends inside the list of products, after ${this.count} item(s): ` +
          'the feed is cut short (the list never closes)',
      );
    if (this.inString || this.depth > 0)
      throw new FeedFormatError('the JSON ends early: the feed is cut short');
    if (this.itemDepth < 0)
      throw new FeedFormatError(
        'the JSON holds no list of products (an array, or an object with "products" or "items")',
      );
  }
}
