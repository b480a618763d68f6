import { z } from 'zod';
import { AppError, type ErrorKind } from '../errors.js';
import { TOO_LONG } from '../domain/fields.js';
import { findTextFault, isAcceptableText, type TextFault } from '../text.js';

export type InputPlace = 'body' | 'query' | 'params';

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  record: 'an object',
  union: 'a valid value',
};

function fieldPath(path: PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function reasonOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${String(issue.maximum)} characters`;
      if (issue.origin === 'array') return `must have at most ${String(issue.maximum)} items`;
      return `must be at most ${String(issue.maximum)}`;
    case 'too_small':
      if (issue.origin === 'string') return `must be at least ${String(issue.minimum)} characters`;
      if (issue.origin === 'array') return `must have at least ${String(issue.minimum)} items`;
      return `must be at least ${String(issue.minimum)}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => String(v)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_format':
      return issue.message && !issue.message.startsWith('Invalid')
        ? issue.message
        : `must be a valid ${issue.format}`;
    default:
      return issue.message;
  }
}

/**
 * Turns the first problem zod found into an AppError that names the field and says what is
 * wrong, with the kind CONTRACT part 6 gives it (query problems are 400, body problems 422).
 */
export function toAppError(error: z.ZodError, place: InputPlace, input?: unknown): AppError {
  const issue = error.issues[0]!;
  // A union none of whose shapes fit (one event or a batch of them): report the problem of
  // the shape the input came closest to (fewest problems), not "invalid input". Only for a
  // whole body: a field's union (a price as number or string) keeps its own message.
  if (issue.code === 'invalid_union' && issue.path.length === 0 && issue.errors.length > 0) {
    const closest = issue.errors.reduce((a, b) => (b.length < a.length ? b : a));
    if (closest.length > 0) {
      const issues = closest.map((i) => ({ ...i, path: [...issue.path, ...i.path] }));
      return toAppError({ issues } as unknown as z.ZodError, place, input);
    }
  }
  if (issue.code === 'unrecognized_keys') {
    const field = fieldPath([...issue.path, issue.keys[0]!]);
    const where = place === 'query' ? 'query parameter' : 'field';
    return new AppError(
      place === 'body' ? 'validation' : 'invalid_query_parameter',
      `Unknown ${where} '${field}'.`,
      { field, reason: `is not a known ${where}` },
    );
  }
  const field = fieldPath(issue.path);
  if (place === 'body' && issue.path.length === 0) {
    return new AppError('invalid_request', 'The request body must be a JSON object.', {
      field: 'body',
      reason: 'must be a JSON object',
    });
  }
  // A required enum that is absent fails as invalid_value, not invalid_type.
  const missing =
    (issue.code === 'invalid_type' ||
      issue.code === 'invalid_union' ||
      issue.code === 'invalid_value') &&
    valueAt(input, issue.path) === undefined;
  if (missing) {
    return new AppError(
      place === 'body' ? 'missing_field' : 'missing_query_parameter',
      `${field} is required.`,
      { field, reason: 'is required' },
    );
  }
  const reason = reasonOf(issue);
  const tooLong =
    (issue.code === 'too_big' && issue.origin === 'string') ||
    (issue.code === 'custom' &&
      (issue.params as { reason?: string } | undefined)?.reason === TOO_LONG);
  const kind: ErrorKind =
    place !== 'body' ? 'invalid_query_parameter' : tooLong ? 'field_too_long' : 'invalid_field';
  return new AppError(kind, `${field} ${reason}.`, { field, reason });
}

/** Parses input against a schema, throwing a mapped AppError on the first problem. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  place: InputPlace,
): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw toAppError(result.error, place, input);
  return result.data;
}

/**
 * The noun a route's 404 names: the path segment before its last parameter, in the singular
 * (`/v1/webhooks/:id/deliveries/:delivery_id` -> delivery).
 */
function resourceOf(path: string): string {
  const segments = path.split('/');
  let last = segments.length - 1;
  while (last > 0 && !segments[last]!.startsWith(':')) last--;
  const noun = segments[last - 1] ?? 'resource';
  const singular = noun.endsWith('ies')
    ? `${noun.slice(0, -3)}y`
    : noun.endsWith('s')
      ? noun.slice(0, -1)
      : noun;
  return singular.replace(/[-_]/g, ' ');
}

/**
 * Refuses text a store cannot hold (src/text.ts) before any schema or handler sees the
 * request, so no route can forget it (CONTRACT part 6): an id in the path is not found (404),
 * a query parameter is invalid (400), a body field anywhere in the JSON, key or value, is
 * invalid (422). The field is named with the refused characters shown as `\u0000`.
 */
export function refuseUnacceptableText(
  route: { path: string; body?: unknown },
  params: Record<string, unknown>,
  query: Record<string, unknown>,
  body: unknown,
): void {
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === 'string' && !isAcceptableText(value)) {
      const resource = resourceOf(route.path);
      throw new AppError('not_found', `No ${resource} with that ${name}.`, {
        field: name,
        reason: 'not found',
      });
    }
  }
  const inQuery = findTextFault(query);
  if (inQuery) raise('invalid_query_parameter', inQuery);
  if (route.body) {
    const inBody = findTextFault(body);
    if (inBody) raise('invalid_field', { ...inBody, field: inBody.field || 'body' });
  }
}

function raise(kind: ErrorKind, fault: TextFault): never {
  throw new AppError(kind, `${fault.field} ${fault.reason}.`, {
    field: fault.field,
    reason: fault.reason,
  });
}
