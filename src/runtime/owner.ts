import os from 'node:os';
import { randomBase62 } from '../ids.js';
import { processIsGone } from './process.js';

/** Owner tokens alive in this process: one with our pid but not in here is a past one. */
const liveTokens = new Set<string>();

/**
 * A token naming this process as the owner of something in the store (a lease, a worker's
 * row): `host/pid/random`, so another process on the same host can tell when it is gone.
 * Alive until released.
 */
export function newOwnerToken(): string {
  const token = `${os.hostname()}/${process.pid}/${randomBase62(10)}`;
  liveTokens.add(token);
  return token;
}

/** This process no longer owns anything by this token. */
export function releaseOwnerToken(token: string): void {
  liveTokens.delete(token);
}

/**
 * Whether the owner a token names is known to be gone: it ran on this host and its process
 * no longer exists (or is a past incarnation of our pid). An owner on another host is only
 * known gone when what it holds lapses.
 */
export function ownerIsGone(token: string): boolean {
  if (liveTokens.has(token)) return false;
  const [host, pidText] = token.split('/');
  const pid = Number(pidText);
  if (host !== os.hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  return pid === process.pid || processIsGone(pid);
}
