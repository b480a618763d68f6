import type { ErrorKind } from './errors.js';

/**
 * The one table of what an error kind is on the wire (CONTRACT part 6): its HTTP status, its
 * code in shape A (`{error:{code}}`) and in shape B (`Prefer: envelope`). The API's error
 * handler and the dashboard's error page both read it, so a kind has one status everywhere.
 */
export const ERROR_STATUS: Readonly<
  Record<ErrorKind, readonly [status: number, code: string, envelopeCode: string]>
> = {
  missing_api_key: [401, 'unauthorized', 'MISSING_API_KEY'],
  invalid_api_key: [401, 'unauthorized', 'INVALID_API_KEY'],
  forbidden: [403, 'forbidden', 'INSUFFICIENT_PERMISSIONS'],
  invalid_request: [400, 'invalid_request', 'INVALID_REQUEST'],
  payload_too_large: [413, 'invalid_request', 'INVALID_REQUEST'],
  method_not_allowed: [405, 'invalid_request', 'INVALID_REQUEST'],
  missing_query_parameter: [400, 'missing_parameter', 'MISSING_REQUIRED_FIELD'],
  invalid_query_parameter: [400, 'invalid_parameter', 'INVALID_FIELD_VALUE'],
  missing_field: [422, 'missing_parameter', 'MISSING_REQUIRED_FIELD'],
  invalid_field: [422, 'invalid_parameter', 'INVALID_FIELD_VALUE'],
  field_too_long: [422, 'invalid_parameter', 'FIELD_TOO_LONG'],
  validation: [422, 'invalid_parameter', 'VALIDATION_ERROR'],
  not_found: [404, 'not_found', 'RESOURCE_NOT_FOUND'],
  already_exists: [409, 'already_exists', 'RESOURCE_ALREADY_EXISTS'],
  conflict: [409, 'conflict', 'RESOURCE_CONFLICT'],
  rate_limited: [429, 'rate_limit_exceeded', 'RATE_LIMIT_EXCEEDED'],
  burst_limited: [429, 'rate_limit_exceeded', 'BURST_LIMIT_EXCEEDED'],
  quota_exceeded: [429, 'rate_limit_exceeded', 'QUOTA_EXCEEDED'],
  internal: [500, 'internal_error', 'INTERNAL_ERROR'],
  upstream: [502, 'upstream_error', 'UPSTREAM_ERROR'],
  unavailable: [503, 'service_unavailable', 'SERVICE_UNAVAILABLE'],
  timeout: [504, 'timeout', 'TIMEOUT'],
};

/** The HTTP status of an error kind. */
export function statusOf(kind: ErrorKind): number {
  return ERROR_STATUS[kind][0];
}

/** The code an error kind shows (shape A: `upstream_error`, `not_found`...). */
export function codeOf(kind: ErrorKind): string {
  return ERROR_STATUS[kind][1];
}
