import fs from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { PoolConfig } from 'pg';

/**
 * DATABASE_URL for PostgreSQL: `postgres://user:password@host:port/database?options`, the
 * user, password and database percent-encoded as in any URL. Options (all optional):
 *
 * - `pool_size`: connections this process keeps at most (default 10);
 * - `statement_timeout`: milliseconds a statement may run before PostgreSQL cancels it
 *   (default 30000; 0 for none);
 * - `connect_timeout`: seconds to wait for a connection (default 10);
 * - `sslmode`: `disable` (default), `require` (TLS, any certificate), `verify-ca` (TLS, a
 *   certificate signed by `sslrootcert` or the system's CAs), `verify-full` (that, and the
 *   host name matches);
 * - `sslrootcert`: a PEM file of the CAs to trust;
 * - `host`: a directory holding PostgreSQL's Unix socket, in place of the URL's host.
 *
 * Anything else is refused by name, so a misspelt option never passes unnoticed.
 */
export interface PostgresSettings {
  pool: PoolConfig;
  /** The URL without its password and options, for logs and messages. */
  display: string;
  /** `host:port` (or the socket directory), for the one-line error when it is unreachable. */
  address: string;
}

const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
const OPTIONS = new Set([
  'pool_size',
  'statement_timeout',
  'connect_timeout',
  'sslmode',
  'sslrootcert',
  'host',
]);

/** Whether a DATABASE_URL names PostgreSQL. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

function integerOption(
  name: string,
  text: string,
  min: number,
  max: number,
  setting = 'DATABASE_URL',
): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new Error(`${setting}: ${name} must be a whole number from ${min} to ${max}`);
  }
  return n;
}

/** How a URL is read: which setting it is (for messages), and whether it leads to a pooler. */
export interface SettingsUse {
  /** The variable, as messages name it: DATABASE_URL (default) or DATABASE_DIRECT_URL. */
  name?: string;
  /**
   * DATABASE_URL leads to a transaction pooler (PgBouncer, `pool_mode = transaction`), which
   * DATABASE_DIRECT_URL being set declares: no startup parameter but application_name is sent
   * (PgBouncer refuses any other), so `statement_timeout` is refused here by name.
   */
  pooled?: boolean;
}

/** Reads DATABASE_URL. Errors name the part at fault and never repeat the password. */
export function postgresSettings(url: string, use: SettingsUse = {}): PostgresSettings {
  const name = use.name ?? 'DATABASE_URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${name}: not a URL (postgres://user:password@host:port/database)`);
  }
  if (!isPostgresUrl(url)) {
    throw new Error(`${name}: the scheme must be postgres:// or postgresql://`);
  }
  for (const key of parsed.searchParams.keys()) {
    if (!OPTIONS.has(key)) {
      throw new Error(
        `${name}: unknown option ${JSON.stringify(key)} (known: ${[...OPTIONS].join(', ')})`,
      );
    }
  }
  if (use.pooled && parsed.searchParams.has('statement_timeout')) {
    throw new Error(
      `${name}: statement_timeout cannot be sent through a transaction pooler (DATABASE_DIRECT_URL is set, so ${name} is taken for PgBouncer in transaction mode, which refuses it as a startup parameter): set it on the role instead (ALTER ROLE ... SET statement_timeout = ...), or PgBouncer's query_timeout`,
    );
  }
  const q = (name: string) => parsed.searchParams.get(name) ?? undefined;
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database) throw new Error(`${name}: the database name (the path) is missing`);
  const socketDir = q('host');
  const host = socketDir ?? (parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost');
  const port = parsed.port ? integerOption('port', parsed.port, 1, 65535, name) : 5432;

  const sslmode = q('sslmode') ?? 'disable';
  if (!(SSL_MODES as readonly string[]).includes(sslmode)) {
    throw new Error(`${name}: sslmode must be one of ${SSL_MODES.join(', ')}`);
  }
  let ssl: ConnectionOptions | false = false;
  if (sslmode !== 'disable') {
    const rootcert = q('sslrootcert');
    let ca: string | undefined;
    if (rootcert) {
      try {
        ca = fs.readFileSync(rootcert, 'utf8');
      } catch (err) {
        throw new Error(`${name}: sslrootcert ${rootcert}: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    ssl =
      sslmode === 'require'
        ? { rejectUnauthorized: false }
        : {
            rejectUnauthorized: true,
            ...(ca ? { ca } : {}),
            // verify-ca trusts the chain but not the name; verify-full checks both.
            ...(sslmode === 'verify-ca' ? { checkServerIdentity: () => undefined } : {}),
          };
  }

  const display = `postgres://${user ? `${encodeURIComponent(user)}@` : ''}${
    socketDir ? '' : parsed.host
  }/${encodeURIComponent(database)}${socketDir ? `?host=${socketDir}` : ''}`;
  return {
    pool: {
      host,
      port,
      ...(user ? { user } : {}),
      ...(password ? { password } : {}),
      database,
      max: integerOption('pool_size', q('pool_size') ?? '10', 1, 1000, name),
      // A startup parameter: through a transaction pooler, none (the role's setting holds).
      ...(use.pooled
        ? {}
        : {
            statement_timeout: integerOption(
              'statement_timeout',
              q('statement_timeout') ?? '30000',
              0,
              2_147_483_647,
              name,
            ),
          }),
      connectionTimeoutMillis:
        integerOption('connect_timeout', q('connect_timeout') ?? '10', 0, 3600, name) * 1000,
      ssl,
      // PgBouncer passes application_name on (one of the parameters it tracks per client).
      application_name: 'agentshelf',
    },
    display,
    address: socketDir ? `${socketDir} (port ${port})` : `${host}:${port}`,
  };
}
