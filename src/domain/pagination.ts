import { z } from 'zod';

/** Bounds of `limit` and `offset` on every list (SPEC part 2). */
export const PAGE_LIMIT = { min: 1, max: 250, default: 50 } as const;
export const MAX_OFFSET = 1_000_000_000;

/** `limit` and `offset` of a list, as numbers (src/http/schemas reads them from a query string). */
export const pageFields = {
  limit: z.int().min(PAGE_LIMIT.min).max(PAGE_LIMIT.max).default(PAGE_LIMIT.default),
  offset: z.int().min(0).max(MAX_OFFSET).default(0),
};

/** The pagination object of a list answer (SPEC part 2): the page asked for, and the total. */
export function presentPagination(
  page: { limit: number; offset: number },
  returned: number,
  total: number,
) {
  return {
    limit: page.limit,
    offset: page.offset,
    total,
    has_more: page.offset + returned < total,
  };
}
