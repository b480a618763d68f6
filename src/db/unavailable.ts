/**
 * Whether an error means the store cannot be reached right now (PostgreSQL restarting, the
 * network down, every connection taken), as opposed to a fault in the query: the API answers
 * those with 503 and Retry-After, and the next request tries again (the pool opens new
 * connections by itself). SQLite, a file in the process, has no such state.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLSTATEs of a server going away or not taking connections yet. */
const SERVER_CODES = new Set([
  '57P01', // admin_shutdown (a fast stop or restart)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down)
  '53300', // too_many_connections
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

const MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Connection ended unexpectedly)/;

/** Seconds a client should wait before trying again. */
export const STORE_RETRY_AFTER_SECONDS = 2;

export function isStoreUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.has(code)))
      return true;
    if (typeof message === 'string' && MESSAGES.test(message)) return true;
    if (e instanceof AggregateError && e.errors.some((x) => isStoreUnavailable(x))) return true;
  }
  return false;
}

/** SQLSTATEs of a connection PostgreSQL refused: the password, the user, the database. */
const REFUSED_CODES: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the user is not allowed to connect',
  '3D000': 'the database does not exist',
};

/** Node's codes for a server certificate that sslmode verify-ca or verify-full refuses. */
const UNTRUSTED_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/** What to do when DATABASE_URL leads to a pooler without DATABASE_DIRECT_URL beside it. */
export const NEEDS_DIRECT_URL =
  'agentshelf needs a session of its own for LISTEN/NOTIFY, migrations and its streaming readers: set DATABASE_DIRECT_URL to PostgreSQL itself (DATABASE_URL may stay on the pooler in transaction mode)';

/** The code of our own error for startup parameters a pooler dropped (db/postgres/store.ts). */
export const POOLER_CODE = 'AGENTSHELF_POOLER';

/** PgBouncer refusing a startup parameter: DATABASE_URL leads to it, not to PostgreSQL. */
function poolerRefusal(message: unknown): string | undefined {
  const m = typeof message === 'string' && /unsupported startup parameter: ?(\S+)/.exec(message);
  if (!m) return undefined;
  return `it is a connection pooler (PgBouncer), which refuses the session setting ${m[1]} (unsupported startup parameter); ${NEEDS_DIRECT_URL}`;
}

/** Why TLS refused the server (its certificate), in words; undefined for other errors. */
function tlsRefusal(err: unknown, address: string): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof message === 'string' && /does not support SSL/.test(message)) {
      return 'the server does not accept TLS connections, and sslmode asks for TLS';
    }
    if (typeof code !== 'string') continue;
    if (UNTRUSTED_CODES.has(code)) {
      return `the server's TLS certificate is not signed by a certificate authority we trust (sslrootcert, or the system's); refused (${code})`;
    }
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      const host = address.replace(/:\d+( \(direct: .*\))?$/, '');
      return `the server's TLS certificate does not name the host ${host} (sslmode=verify-full checks it: connect by a name the certificate carries); refused`;
    }
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
      return `the server's TLS certificate is not valid now; refused (${code})`;
    }
  }
  return undefined;
}

/**
 * The one line a command prints when it cannot open its PostgreSQL store, naming where it
 * tried (`address`, host:port from DATABASE_URL: never the password); undefined for any
 * other error.
 */
export function unreachableStoreMessage(err: unknown, address: string): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && REFUSED_CODES[code])
      return `cannot open the PostgreSQL store at ${address}: ${REFUSED_CODES[code]}`;
    if (code === POOLER_CODE && typeof message === 'string')
      return `cannot open the PostgreSQL store at ${address}: ${message}`;
    const pooler = poolerRefusal(message);
    if (pooler) return `cannot open the PostgreSQL store at ${address}: ${pooler}`;
  }
  const tls = tlsRefusal(err, address);
  if (tls) return `cannot open the PostgreSQL store at ${address}: ${tls}`;
  if (!isStoreUnavailable(err)) return undefined;
  let reason = 'unreachable';
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) {
      reason = `unreachable (${code})`;
      break;
    }
  }
  return `cannot reach PostgreSQL at ${address}: ${reason}; is it running, and is DATABASE_URL right?`;
}
