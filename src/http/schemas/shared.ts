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

/**
 * Any JSON value, named once under components/schemas. Arrays are written with `items: {}`
 * (any value, which for JSON is exactly a JSON value) rather than a reference to JsonValue:
 * the TypeScript that openapi-typescript generates cannot express an array type that
 * refers to itself through `components`, and the type checker refuses it.
 */
doc(JsonValue, {
  id: 'JsonValue',
  description: 'Any JSON value',
  anyOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'null' },
    { type: 'array', items: {} },
    { type: 'object', additionalProperties: { $ref: '#/components/schemas/JsonValue' } },
  ],
});
