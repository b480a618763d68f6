import type Koa from 'koa';
import type { AuditWriter } from '../domain/audit-writer.js';

/**
 * Queues the audit entry of a request whose key the store knows (authenticated, or refused
 * as revoked). Called once the response status is final, after the error handler.
 */
export function auditRequest(ctx: Koa.Context, audit: AuditWriter): void {
  const keyId = ctx.state.auditKeyId as string | undefined;
  if (!keyId) return;
  audit.record({
    created_at: (ctx.state.receivedAt as Date).toISOString(),
    api_key_id: keyId,
    method: ctx.method,
    path: ctx.path,
    status: ctx.status,
    request_id: String(ctx.state.requestId),
    client_ip: clientIp(ctx),
  });
}

/** The peer address, with IPv4 addresses written as IPv4 (not `::ffff:127.0.0.1`). */
function clientIp(ctx: Koa.Context): string | null {
  const ip = ctx.ip;
  if (!ip) return null;
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}
