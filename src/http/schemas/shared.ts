import { z } from 'zod';
import { JsonValue } from '../../domain/fields.js';
import { MAX_OFFSET, PAGE_LIMIT } from '../../domain/pagination.js';
import { doc } from './registry.js';

/**
 * `limit` and `offset` read from a query string, where every value is text: the domain's
 * `pageFields`, coerced from strings.
 */
export const pageQuery = {
  limit: z.coerce
    .number<string>()
    .int()
    .min(PAGE_LIMIT.min)
    .max(PAGE_LIMIT.max)
    .default(PAGE_LIMIT.default),
  offset: z.coerce.number<string>().int().min(0).max(MAX_OFFSET).default(0),
};

doc(JsonValue, { id: 'JsonValue', description: 'Any JSON value' });
