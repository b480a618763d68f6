import type { Readable } from 'node:stream';
import { isValidGtin } from '../domain/fields.js';
import { LIMITS } from '../domain/products/schemas.js';
import type { SourceItem, SourceProduct } from '../domain/integrations/source.js';

/**
 * What the platform sources share: turning platform values into our product fields. The sync
 * validates every SourceProduct with the product schema; these helpers only keep lossy fields
 * (descriptions, image lists) inside our limits so one long text does not fail a product.
 */

/** A GTIN when the barcode is one (8, 12, 13 or 14 digits with a valid check digit). */
export function gtinOf(barcode: unknown): string | undefined {
  if (typeof barcode !== 'string') return undefined;
  const digits = barcode.trim();
  return isValidGtin(digits) ? digits : undefined;
}

/** Cuts a text to `max` code points (descriptions are lossy: HTML stripped, long ones cut). */
export function cutText(text: string | null | undefined, max: number): string | null {
  if (text === null || text === undefined) return null;
  const trimmed = text.trim();
  if (trimmed.length === 0) return null;
  const points = Array.from(trimmed);
  return points.length <= max ? trimmed : points.slice(0, max).join('');
}

/** HTML to plain text: tags dropped, the common entities decoded, white space collapsed. */
export function htmlToText(html: string | null | undefined): string | null {
  if (!html) return null;
  const text = html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<br\s*\/?>|<\/?(p|div|li|ul|ol|h[1-6]|tr|table|blockquote|section)\b[^>]*>/gi, '\n')
    .replace(/<\/?(td|th)\b[^>]*>/gi, ' ')
    // Inline tags (<em>, <strong>, <a>, <span>) join the words around them as they are.
    .replace(/<[^>]*>/g, '')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] === '#') {
        const code =
          name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1));
        return Number.isInteger(code) && code > 0 && code <= 0x10ffff
          ? String.fromCodePoint(code)
          : whole;
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/[ \t\r\f\v]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{2,}/g, '\n')
    .trim();
  return text.length > 0 ? text : null;
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** The description field: plain text within our limit, or null. */
export function descriptionOf(text: string | null | undefined): string | null {
  return cutText(text, LIMITS.description);
}

/** Distinct http(s) image URLs, at most our limit, in order. */
export function imageList(urls: Iterable<string | null | undefined>): string[] {
  const seen = new Set<string>();
  for (const url of urls) {
    if (typeof url !== 'string' || !/^https?:\/\//i.test(url) || url.length > LIMITS.url) continue;
    seen.add(url);
    if (seen.size >= LIMITS.images) break;
  }
  return [...seen];
}

/** A product name with the variant's words after it, when they fit (else the product's). */
export function variantName(title: string, variantTitle: string | null | undefined): string {
  const extra = variantTitle?.trim();
  if (!extra || extra === 'Default Title') return title;
  const joined = `${title} - ${extra}`;
  return Array.from(joined).length <= LIMITS.name ? joined : title;
}

/** Colour and size from a variant's options, by the option's name, as Google's feed wants. */
export function optionAttributes(
  options: Iterable<{ name: string; value: string | null | undefined }>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of options) {
    if (typeof value !== 'string' || value.trim() === '') continue;
    const key = name.trim().toLowerCase();
    if ((key === 'color' || key === 'colour') && !out.color) out.color = value.trim();
    else if (key === 'size' && !out.size) out.size = value.trim();
    else if (key === 'material' && !out.material) out.material = value.trim();
  }
  return out;
}

/** A brand within our limit, or nothing (an empty or over-long vendor names no brand). */
export function brandOf(vendor: unknown): string | undefined {
  if (typeof vendor !== 'string') return undefined;
  const brand = vendor.trim();
  return brand.length > 0 && Array.from(brand).length <= LIMITS.brand ? brand : undefined;
}

/** An item of kind `product`. */
export function productItem(externalId: string, product: SourceProduct): SourceItem {
  return { kind: 'product', externalId, product };
}

/** An item of kind `error`: this one thing fails, the run goes on. */
export function errorItem(externalId: string | null, field: string, reason: string): SourceItem {
  return { kind: 'error', externalId, field, reason };
}

/** A line of a body: its text, and whether a line end closed it (the last may have none). */
export interface Line {
  text: string;
  ended: boolean;
}

/**
 * The lines of a streamed body, one at a time, without holding the body: at most one line
 * (capped at `maxLine` bytes) is buffered. Blank lines are skipped.
 */
export async function* readLines(body: Readable, maxLine = 16 * 1024 * 1024): AsyncGenerator<Line> {
  let rest = '';
  body.setEncoding('utf8');
  for await (const chunk of body as AsyncIterable<string>) {
    let start = 0;
    let end = chunk.indexOf('\n');
    while (end !== -1) {
      const text = rest + chunk.slice(start, end);
      rest = '';
      if (text.trim() !== '') yield { text, ended: true };
      start = end + 1;
      end = chunk.indexOf('\n', start);
    }
    rest += chunk.slice(start);
    if (rest.length > maxLine) throw new Error(`a line is over ${maxLine} bytes`);
  }
  if (rest.trim() !== '') yield { text: rest, ended: false };
}

/** Whether a value is a plain object (JSON `{}`), for reading untyped platform answers. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string field, or undefined. */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}
