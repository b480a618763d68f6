import { z } from 'zod';
import type { RouteResponse } from '../route.js';

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().meta({ description: 'Lower-case code (shape A); upper-case in shape B' }),
      message: z.string(),
      details: z.string(),
    }),
  })
  .meta({
    id: 'Error',
    description:
      'Shape A error. With `Prefer: envelope`: {success:false, error:{code, message, details:{field, reason}}, meta}',
  });

/** The error responses every authenticated route can give. */
export const ErrorResponses: Record<number, RouteResponse> = {
  400: { description: 'Malformed request or query parameter', schema: ErrorBody },
  401: { description: 'Missing, unknown, revoked or other-environment API key', schema: ErrorBody },
  403: { description: 'The key level is too low', schema: ErrorBody },
  404: { description: 'No such resource', schema: ErrorBody },
  409: { description: 'Id taken, state conflict or Idempotency-Key reuse', schema: ErrorBody },
  413: { description: 'Body over 1 MiB', schema: ErrorBody },
  422: { description: 'A body field is missing, invalid or too long', schema: ErrorBody },
  429: {
    description:
      'Over the burst limit, the per-minute limit or the monthly quota; Retry-After says how many seconds to wait',
    schema: ErrorBody,
  },
  500: { description: 'Unexpected error; quote X-Request-Id', schema: ErrorBody },
  503: { description: 'Shutting down or overloaded', schema: ErrorBody },
};
