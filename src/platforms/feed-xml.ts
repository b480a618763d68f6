import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { XMLParser } from 'fast-xml-parser';
import {
  columnKey,
  FeedFormatError,
  isObject,
  MAX_FIELD_BYTES,
  MAX_ITEM_CHARS,
  sizeText,
  type FieldValue,
  type RawFields,
  type RawRecord,
} from './feed-records.js';

/**
 * XML feeds (RSS 2.0 or Atom with Google's `g:` namespace; our own export is RSS 2.0): each
 * `<item>` / `<entry>` / `<product>` is cut out of the stream and parsed alone with
 * fast-xml-parser (validated; entities, CDATA, attributes), so memory holds one item.
 */

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
/** The document's root element, after a declaration, comments, a doctype. */
const ROOT =
  /^\uFEFF?(?:\s+|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>)*<([A-Za-z_][\w.:-]*)([^>]*)>/;

/**
 * The items of an XML feed, one at a time. An item over MAX_ITEM_CHARS is let go as it
 * streams in, skipped to its end tag and refused alone. The document must end: a file that
 * stops inside an item, or without its root's end tag (`</rss>`), was cut short and fails.
 */
export async function* readXml(body: Readable): AsyncGenerator<RawRecord> {
  const decoder = new StringDecoder('utf8');
  let buffer = '';
  /** Where the next item is looked for in `buffer` (what is before it is read). */
  let from = 0;
  let position = 0;
  let sawRoot = false;
  /** The root element's name, once seen (`rss`, `feed`); '' when it closes itself. */
  let root: string | undefined;
  let ended = false;
  /** The end tag of an item being skipped (it is over the cap), or null. */
  let skipTo: string | null = null;
  let refusal = '';
  const source = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    if (skipTo !== null) {
      const end = endTagOf(buffer, from, skipTo);
      if (typeof end === 'number') {
        skipTo = null;
        from = end;
        yield { kind: 'bad', position, reason: refusal };
        continue;
      }
      // Nothing before a possible start of the end tag is needed again.
      from = end.keepFrom;
    } else {
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
    if (skipTo !== null) {
      buffer = buffer.slice(from) + text;
      from = 0;
      continue;
    }
    // Drop what is read; keep the tail of a channel head that holds no item yet, in case a
    // start tag is cut between two chunks.
    buffer = buffer.slice(from) + text;
    from = 0;
    if (root === undefined) {
      const match = ROOT.exec(buffer);
      if (match) root = match[2]!.endsWith('/') ? '' : match[1]!;
    }
    if (buffer.length > 65536 && buffer.search(ITEM_START_ANY) < 0) buffer = buffer.slice(-256);
    // An item not whole yet, too long, or with a text too long: let go, and skipped to its end.
    const over =
      buffer.length > MAX_ITEM_CHARS
        ? `the item is over ${sizeText(MAX_ITEM_CHARS)}`
        : textRunOf(buffer) > MAX_FIELD_BYTES
          ? `a text is over ${sizeText(MAX_FIELD_BYTES)}`
          : undefined;
    if (over !== undefined) {
      const start = ITEM_START_ANY.exec(buffer);
      if (!start) throw new FeedFormatError(`the XML has a part over ${sizeText(MAX_ITEM_CHARS)}`);
      position++;
      skipTo = `</${start[1]!}`;
      refusal = over;
      buffer = buffer.slice(-skipTo.length - 1);
    }
  }
  if (!sawRoot) throw new FeedFormatError('the feed is empty');
  if (skipTo !== null || ITEM_START_ANY.test(buffer.slice(from))) {
    const tag = skipTo?.slice(2) ?? ITEM_START_ANY.exec(buffer.slice(from))![1]!;
    throw new FeedFormatError(
      `the XML ends inside item ${skipTo !== null ? position : position + 1} ` +
        `(its <${tag}> never closes): the feed is cut short`,
    );
  }
  if (position === 0 && buffer.trim() !== '' && !/<(?:rss|feed|channel)[\s>]/.test(buffer))
    throw new FeedFormatError('the XML has no <item> or <entry> elements');
  if (root && !new RegExp(`</${escapeRegExp(root)}\\s*>`).test(buffer.slice(from)))
    throw new FeedFormatError(`the XML ends before its </${root}> end tag: the feed is cut short`);
}

/** The length of the text at the end of `buffer` since its last markup (`<` or `>`). */
function textRunOf(buffer: string): number {
  return buffer.length - 1 - Math.max(buffer.lastIndexOf('<'), buffer.lastIndexOf('>'));
}

/**
 * Where the end tag `close` (`</item`) ends in `text` from `from` (the index after its `>`),
 * or, while it has not come yet, from where it still may begin.
 */
function endTagOf(text: string, from: number, close: string): number | { keepFrom: number } {
  let at = from;
  for (;;) {
    const found = text.indexOf(close, at);
    if (found < 0) return { keepFrom: Math.max(from, text.length - close.length) };
    const after = text[found + close.length];
    if (after === undefined) return { keepFrom: found };
    if (after === '>' || /\s/.test(after)) {
      const gt = text.indexOf('>', found);
      return gt < 0 ? { keepFrom: found } : gt + 1;
    }
    at = found + 1;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
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
