import type Koa from 'koa';
import type { RequestState } from './request-state.js';

const ENVELOPE_OPEN = Buffer.from('{"success":true,"data":');

/**
 * Wraps a successful body in shape B (`{success, data, meta}`) when the client asked with
 * `Prefer: envelope`. JSON the handler already serialised is wrapped as bytes; files and
 * streams are never wrapped.
 */
export function wrapInEnvelope(ctx: Koa.Context, state: RequestState, now: Date): void {
  if (!state.envelope || ctx.status >= 400 || ctx.body === undefined || ctx.body === null) return;
  if (state.raw) return;
  const meta = { request_id: state.requestId, timestamp: now.toISOString() };
  ctx.body = state.jsonBytes
    ? Buffer.concat([
        ENVELOPE_OPEN,
        ctx.body as Buffer,
        Buffer.from(`,"meta":${JSON.stringify(meta)}}`),
      ])
    : { success: true, data: ctx.body, meta };
}
