import type Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { AppError } from '../errors.js';

/** Parses a JSON body (up to 1 MB); a body of another type is refused by name. */
export function jsonBody(): Koa.Middleware {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: '1mb', encoding: 'utf-8' });
  return async (ctx, next) => {
    const hasBody =
      Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (hasBody && !ctx.is('application/json')) {
      throw new AppError('invalid_request', 'Content-Type must be application/json.', {
        field: 'Content-Type',
        reason: 'must be application/json',
      });
    }
    await parse(ctx, next);
  };
}

/** The body as it arrived (the idempotency fingerprint hashes it); '' when there was none. */
export function rawBodyOf(ctx: Koa.Context): string {
  return (ctx.request as { rawBody?: string }).rawBody ?? '';
}

/** A body read whole as bytes (an inbound webhook's signature covers them), 413 past `max`. */
export async function readRawBody(ctx: Koa.Context, max: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      throw new AppError('payload_too_large', `${what} is over ${max / 1024 / 1024} MiB.`, {
        field: 'body',
        reason: `must be at most ${max / 1024 / 1024} MiB`,
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
