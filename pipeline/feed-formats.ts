import { stringify } from 'csv-stringify/sync';
import type { FeedFormat } from '../src/db/schema.js';
import {
  dropForbiddenCharacters,
  FEED_COLUMNS,
  type FeedRecord,
} from '../src/domain/feed-record.js';

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
  records(batch: readonly FeedRecord[], first: boolean): string;
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

/** CSV (RFC 4180 through csv-stringify): a header row, then one row per product. */
const csv: FeedFormatter = {
  begin: () => stringify([FEED_COLUMNS as unknown as string[]]),
  records: (batch) =>
    stringify(
      batch.map((r) => FEED_COLUMNS.map((c) => r[c])),
      // csv-stringify quotes fields with a quote, comma, CR or LF; nothing is prefixed.
    ),
  end: () => '',
};

const XML_TEXT = /[&<>\r]/;
const XML_TEXT_ALL = /[&<>\r]/g;
const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '\r': '&#13;',
};

/**
 * Escapes text for XML element content. `>` is escaped too, so `]]>` cannot appear, and CR
 * is written as a character reference because XML parsers turn a raw CR into LF.
 */
export function escapeXmlText(value: string): string {
  return XML_TEXT.test(value) ? value.replace(XML_TEXT_ALL, (c) => XML_ESCAPES[c]!) : value;
}

function clean(value: string): string {
  return dropForbiddenCharacters(value);
}

// Element names, built once: <g:id>, </g:id>, ...
const OPEN = FEED_COLUMNS.map((c) => `<g:${c}>`);
const CLOSE = FEED_COLUMNS.map((c) => `</g:${c}>\n`);

/**
 * RSS 2.0 with the Google namespace, which Merchant Center reads too. Every column is a
 * `g:` element; an empty value is left out.
 */
const xml: FeedFormatter = {
  begin: (meta) =>
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">\n<channel>\n' +
    `<title>${escapeXmlText(clean(meta.name))}</title>\n` +
    `<link>${escapeXmlText(clean(meta.storeUrl))}</link>\n` +
    `<description>${escapeXmlText(clean(`Products of ${meta.storeName}`))}</description>\n`,
  records: (batch) => {
    let out = '';
    for (const r of batch) {
      out += '<item>\n';
      for (let i = 0; i < FEED_COLUMNS.length; i++) {
        const value = r[FEED_COLUMNS[i]!];
        if (value !== '') out += OPEN[i] + escapeXmlText(value) + CLOSE[i];
      }
      out += '</item>\n';
    }
    return out;
  },
  end: () => '</channel>\n</rss>\n',
};

export const FEED_FORMATTERS: Record<FeedFormat, FeedFormatter> = { json, csv, xml };
