import fc from 'fast-check';
import { formatMinorUnits, maxMinorUnits } from '../../src/domain/money.js';

/** Currencies of each kind of minor unit: 2 (USD, EUR), 0 (JPY) and 3 (KWD, BHD) decimals. */
export const CURRENCIES = ['USD', 'JPY', 'KWD', 'EUR', 'BHD'];

/** Text the API accepts in a required field: no NUL, not only white space. */
export const textField = (maxLength: number) =>
  fc
    .string({ unit: 'binary', minLength: 1, maxLength })
    .filter((s) => !s.includes('\u0000') && s.trim().length > 0);

/** Whether a JSON value has a `__proto__` key at any depth (the API refuses those). */
export function hasProtoKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasProtoKey);
  if (typeof value !== 'object' || value === null) return false;
  return Object.keys(value).some((k) => k === '__proto__' || hasProtoKey((value as never)[k]));
}

/**
 * A product the API accepts, in parts (see productBody). Limited to what the API takes: in
 * particular no `__proto__` key anywhere in the attributes.
 */
export const product = fc.record({
  name: textField(40),
  description: fc.option(textField(80), { nil: null }),
  currency: fc.constantFrom(...CURRENCIES),
  // A fraction of the largest price, so the extremes (0, the maximum) come up too.
  share: fc.oneof(fc.constantFrom(0, 1), fc.double({ min: 0, max: 1, noNaN: true })),
  status: fc.constantFrom('active', 'inactive', 'draft'),
  category: fc.option(
    fc
      .array(textField(12), { minLength: 1, maxLength: 3 })
      .filter((levels) => levels.every((l) => !l.includes('>'))),
    { nil: null },
  ),
  images: fc.array(fc.webUrl(), { maxLength: 3 }),
  // Keys of our own, so the known attributes' checks stay out of the way.
  extra: fc
    .dictionary(
      fc.string({ maxLength: 8 }).map((k) => `x_${k}`),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 4 },
    )
    .filter((extra) => !hasProtoKey(extra)),
  brand: fc.option(textField(20), { nil: undefined }),
});
export type ProductSketch = typeof product extends fc.Arbitrary<infer T> ? T : never;

/** The price of a sketch in minor units. */
export function minorOf(p: ProductSketch): number {
  return Math.round(maxMinorUnits(p.currency) * p.share);
}

/** A sketch as the body of POST /v1/products. */
export function productBody(p: ProductSketch): Record<string, unknown> {
  return {
    name: p.name,
    description: p.description,
    price: formatMinorUnits(minorOf(p), p.currency),
    currency: p.currency,
    status: p.status,
    category: p.category?.join(' > ') ?? null,
    images: p.images,
    attributes: { ...p.extra, ...(p.brand ? { brand: p.brand } : {}) },
  };
}
