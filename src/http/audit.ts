import type { Socket } from 'node:net';
import type Koa from 'koa';
import type { AuditWriter } from '../domain/audit/writer.js';
import { requestState } from './request-state.js';

/**
 * Queues the audit entry of a request whose key the store knows (authenticated, or refused
 * as revoked). Called once the response status is final, after the error handler.
 */
export function auditRequest(ctx: Koa.Context, audit: AuditWriter): void {
  const state = requestState(ctx);
  const keyId = state.auditKeyId;
  if (!keyId) return;
  audit.record([
    state.receivedAt.getTime(),
    keyId,
    ctx.method,
    ctx.path,
    ctx.status,
    state.requestId,
    clientIp(ctx),
  ]);
}

// Reading a socket's peer address is a system call; a keep-alive connection asks once.
const peers = new WeakMap<Socket, string | null>();

/** The peer address, with IPv4 addresses written as IPv4 (not `::ffff:127.0.0.1`). */
function clientIp(ctx: Koa.Context): string | null {
  const socket = ctx.req.socket;
  let ip = peers.get(socket);
  if (ip === undefined) {
    const raw = socket.remoteAddress;
    ip = !raw ? null : raw.startsWith('::ffff:') && raw.includes('.') ? raw.slice(7) : raw;
    // An address is known once connected; do not remember the absence of one.
    if (ip) peers.set(socket, ip);
  }
  return ip;
}
