import type { FeedFormat } from '../src/db/schema.js';
import type {
  ChannelProfile,
  ChannelRecord,
  ChannelValue,
  FlatProfile,
} from '../src/domain/feeds/channels/profile.js';
import { dropForbiddenCharacters, FEED_COLUMNS } from '../src/domain/feeds/record.js';

/** What a feed file says about itself (no timestamps: unchanged catalogues give equal bytes). */
export interface FeedMeta {
  id: string;
  name: string;
  storeName: string;
  storeUrl: string;
}

/**
 * One feed format as text pieces: the writer streams `begin`, then `records` for each batch
 * in order (`first` is true for the batch that opens the list), then `end`.
 */
export interface FeedFormatter {
  begin(meta: FeedMeta): string;
  records(batch: readonly object[], first: boolean): string;
  end(meta: FeedMeta): string;
}

/** JSON: {"id", "name", "products": [...]} with one product a line. */
const json: FeedFormatter = {
  begin: (meta) =>
    `{"id":${JSON.stringify(meta.id)},"name":${JSON.stringify(clean(meta.name))},"products":[`,
  records: (batch, first) => {
    let out = '';
    for (let i = 0; i < batch.length; i++) {
      out += (first && i === 0 ? '\n' : ',\n') + JSON.stringify(batch[i]);
    }
    return out;
  },
  end: () => '\n]}\n',
};

/** What makes csv-stringify quote a cell with its defaults: the quote, the comma, CR, LF. */
const CSV_SPECIAL = /[",\r\n]/;

/**
 * One CSV cell as csv-stringify writes it with its defaults (RFC 4180): as it is, or quoted
 * with its quotes doubled when it holds a quote, comma, CR or LF; nothing is prefixed (no
 * formula escaping for machines).
 */
export function csvCell(value: string): string {
  return CSV_SPECIAL.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * CSV: a header row, then one row per product, each row written in one pass over the columns
 * (the bytes csv-stringify wrote, at a third of its CPU and none of its per-row arrays).
 */
function csvFormatter(profile: Pick<FlatProfile, 'columns' | 'groups'>): FeedFormatter {
  const columns = profile.columns;
  const last = columns.length - 1;
  const cell = cellOf(profile);
  return {
    begin: () => headerOf(profile).map(csvCell).join(',') + '\n',
    records: (batch) => {
      let out = '';
      for (const r of batch as ChannelRecord[]) {
        for (let i = 0; i <= last; i++) {
          const c = columns[i]!;
          const value = r[c]!;
          // The usual value is text (no call for it), often empty (no test for it).
          if (value !== '') out += csvCell(typeof value === 'string' ? value : cell(c, value));
          out += i === last ? '\n' : ',';
        }
      }
      return out;
    },
    end: () => '',
  };
}

const csv = csvFormatter({ columns: FEED_COLUMNS });

/** The header cells: a group column as Merchant Center names it, `name(sub1:sub2)`. */
function headerOf(profile: Pick<FlatProfile, 'columns' | 'groups'>): string[] {
  return profile.columns.map((c) => {
    const group = profile.groups?.[c];
    return group ? `${c}(${group.join(':')})` : c;
  });
}

/**
 * A value as one text cell: text as it is, a list joined by commas (a comma inside an item
 * percent-encoded, as additional image links are), a group's values joined by colons in its
 * sub-attributes' order, any other map as JSON (OpenAI's variant_dict).
 */
function cellOf(profile: Pick<FlatProfile, 'groups'>) {
  return (column: string, value: ChannelValue): string => {
    if (typeof value === 'string') return value;
    if (Array.isArray(value)) return value.map((v: string) => v.replaceAll(',', '%2C')).join(',');
    const group = profile.groups?.[column];
    const map = value as Readonly<Record<string, string>>;
    if (group) return group.map((k) => map[k] ?? '').join(':');
    return JSON.stringify(map);
  };
}

/**
 * TSV as Merchant Center and OpenAI read it: a header line, one line per product, no quoting;
 * a tab or line break inside a value becomes a space (TSV has no way to carry them).
 */
function tsvFormatter(profile: FlatProfile): FeedFormatter {
  const cell = cellOf(profile);
  const line = (cells: string[]) =>
    cells.map((v) => (/[\t\r\n]/.test(v) ? v.replace(/[\t\r\n]+/g, ' ') : v)).join('\t') + '\n';
  return {
    begin: () => line(headerOf(profile)),
    records: (batch) => {
      let out = '';
      for (const r of batch as ChannelRecord[]) {
        out += line(profile.columns.map((c) => cell(c, r[c]!)));
      }
      return out;
    },
    end: () => '',
  };
}

/** Whether a flat record's value is empty: '' or an empty list (JSON Lines leaves it out). */
function isEmptyValue(value: ChannelValue | undefined): boolean {
  return typeof value === 'string' ? value === '' : Array.isArray(value) && value.length === 0;
}

/**
 * JSON Lines: one record a line (flat records without their empty values). A flat record is
 * copied by a spread, which keeps the profile's one object shape, and its empty values set to
 * undefined, which JSON.stringify leaves out as it would a missing key: stringify keeps its
 * fast path for that shape (a record built key by key took it 3 to 4 times longer).
 */
function jsonlFormatter(flat: boolean): FeedFormatter {
  return {
    begin: () => '',
    records: (batch) => {
      let out = '';
      for (const r of batch) {
        if (flat) {
          const compact: Record<string, ChannelValue | undefined> = { ...(r as ChannelRecord) };
          for (const key in compact) if (isEmptyValue(compact[key])) compact[key] = undefined;
          out += JSON.stringify(compact) + '\n';
        } else out += JSON.stringify(r) + '\n';
      }
      return out;
    },
    end: () => '',
  };
}

/** ACP's products envelope (ProductsResponse of openapi.feed.yaml): {"products": [...]}. */
const acpJson: FeedFormatter = {
  begin: () => '{"products":[',
  records: json.records,
  end: () => '\n]}\n',
};

const XML_SPECIAL = /[&<>\r]/;
const XML_SPECIAL_ALL = /[&<>\r]/g;
const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '\r': '&#13;',
};

/**
 * Escapes text for XML element content with character references: `>` too, so `]]>` cannot
 * appear, and CR, because XML parsers turn a raw CR into LF.
 */
export function escapeXmlText(value: string): string {
  return XML_SPECIAL.test(value) ? value.replace(XML_SPECIAL_ALL, (c) => XML_ESCAPES[c]!) : value;
}

/**
 * Text for an element: as it is when nothing needs escaping; a CDATA section when it holds
 * `&`, `<` or `>` (one copy instead of a replacement per character: HTML-ish descriptions
 * escape 25 times faster); character references when it holds a CR or `]]>`, which a CDATA
 * section cannot carry.
 */
export function xmlText(value: string): string {
  if (!XML_SPECIAL.test(value)) return value;
  if (value.includes('\r') || value.includes(']]>')) return escapeXmlText(value);
  return `<![CDATA[${value}]]>`;
}

function clean(value: string): string {
  return dropForbiddenCharacters(value);
}

/**
 * RSS 2.0 with the Google namespace, which Merchant Center reads too. Every column is a
 * `g:` element; an empty value is left out, a list is the element repeated, a group its
 * sub-attributes as `g:` elements inside it.
 */
function xmlFormatter(columns: readonly string[]): FeedFormatter {
  // Element names, built once: <g:id>, </g:id>, ...
  const OPEN = columns.map((c) => `<g:${c}>`);
  const CLOSE = columns.map((c) => `</g:${c}>\n`);
  const element = (i: number, value: ChannelValue): string => {
    if (typeof value === 'string') return value === '' ? '' : OPEN[i] + xmlText(value) + CLOSE[i];
    if (Array.isArray(value)) {
      let out = '';
      for (const v of value as string[]) out += OPEN[i] + xmlText(v) + CLOSE[i];
      return out;
    }
    let inner = '';
    for (const [k, v] of Object.entries(value)) inner += `<g:${k}>${xmlText(v)}</g:${k}>`;
    return `${OPEN[i]}${inner}${CLOSE[i]}`;
  };
  return {
    begin: (meta) =>
      '<?xml version="1.0" encoding="UTF-8"?>\n' +
      '<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">\n<channel>\n' +
      `<title>${escapeXmlText(clean(meta.name))}</title>\n` +
      `<link>${escapeXmlText(clean(meta.storeUrl))}</link>\n` +
      `<description>${escapeXmlText(clean(`Products of ${meta.storeName}`))}</description>\n`,
    records: (batch) => {
      let out = '';
      for (const r of batch as ChannelRecord[]) {
        out += '<item>\n';
        for (let i = 0; i < columns.length; i++) {
          const value = r[columns[i]!]!;
          // The usual value is text: no call for it.
          if (typeof value === 'string') {
            if (value !== '') out += OPEN[i] + xmlText(value) + CLOSE[i];
          } else out += element(i, value);
        }
        out += '</item>\n';
      }
      return out;
    },
    end: () => '</channel>\n</rss>\n',
  };
}

const xml = xmlFormatter(FEED_COLUMNS);

/** Today's formats of the `agentshelf` profile. */
export const FEED_FORMATTERS = { json, csv, xml } satisfies Partial<
  Record<FeedFormat, FeedFormatter>
>;

/** The formatter of a profile and one of the formats it takes. */
export function formatterFor(profile: ChannelProfile, format: FeedFormat): FeedFormatter {
  if (profile.name === 'agentshelf') return FEED_FORMATTERS[format as keyof typeof FEED_FORMATTERS];
  if (profile.kind === 'grouped') return format === 'json' ? acpJson : jsonlFormatter(false);
  switch (format) {
    case 'jsonl':
      return jsonlFormatter(true);
    case 'csv':
      return csvFormatter(profile);
    case 'tsv':
      return tsvFormatter(profile);
    case 'xml':
      return xmlFormatter(profile.columns);
    default:
      throw new Error(`the ${profile.name} profile has no ${format} format`);
  }
}
