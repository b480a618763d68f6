/**
 * The catalog requests of UCP 2026-04-08 (vendor/ucp/schemas/shopping/catalog_search.json,
 * catalog_lookup.json), as zod schemas: the same types and bounds; members the schemas leave
 * open (context, signals, attribution, extra filters) are accepted and not read. Our own
 * limits: a page of at most MAX_PAGE (a larger limit is clamped, as the spec allows), at most
 * MAX_LOOKUP_IDS identifiers a lookup (more is `request_too_large`).
 */
import { z } from 'zod';
import { findTextFault } from '../../text.js';

export const DEFAULT_PAGE = 10;
export const MAX_PAGE = 50;
export const MAX_LOOKUP_IDS = 50;

/** ISO 4217 minor units (types/amount.json): a whole number, zero or more. */
const Amount = z.int().min(0);

const Filters = z.looseObject({
  categories: z.array(z.string()).optional(),
  price: z.looseObject({ min: Amount.optional(), max: Amount.optional() }).optional(),
});

const Context = z.looseObject({ currency: z.string().optional() });

const Common = {
  context: Context.optional(),
  signals: z.looseObject({}).optional(),
  attribution: z.looseObject({}).optional(),
  filters: Filters.optional(),
};

export const SearchRequest = z.looseObject({
  query: z.string().optional(),
  ...Common,
  pagination: z
    .looseObject({ cursor: z.string().optional(), limit: z.int().min(1).optional() })
    .optional(),
});
export type SearchRequest = z.infer<typeof SearchRequest>;

export const LookupRequest = z.looseObject({
  ids: z.array(z.string()).min(1),
  ...Common,
});
export type LookupRequest = z.infer<typeof LookupRequest>;

const SelectedOption = z.looseObject({
  name: z.string(),
  label: z.string(),
  id: z.string().optional(),
});

export const ProductRequest = z.looseObject({
  id: z.string(),
  selected: z.array(SelectedOption).optional(),
  preferences: z.array(z.string()).optional(),
  ...Common,
});
export type ProductRequest = z.infer<typeof ProductRequest>;

/** A request refused before it is read: which field, and what is wrong with it. */
export class UcpRequestError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
    /** `invalid_request`, or `request_too_large` for a batch over the limit. */
    readonly code: 'invalid_request' | 'request_too_large' = 'invalid_request',
  ) {
    super(field ? `${field}: ${reason}` : reason);
  }
}

function fieldOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/**
 * A parsed JSON body checked against a request schema: text a store cannot hold (U+0000, a
 * lone surrogate) anywhere is refused first (CONTRACT part 6), then the schema's first
 * problem, naming its field.
 */
export function parseUcpRequest<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new UcpRequestError('', 'the request body must be a JSON object');
  }
  const fault = findTextFault(body);
  if (fault) throw new UcpRequestError(fault.field, fault.reason);
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UcpRequestError(fieldOf(issue.path), issue.message);
  }
  return parsed.data;
}
