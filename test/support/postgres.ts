/**
 * A real PostgreSQL for tests and benchmarks: Debian's `postgresql` package (initdb, pg_ctl),
 * one cluster per process in a temporary directory, on a free loopback port, with a password
 * (so the tests see what a deployment sees), torn down when the process exits, even by
 * SIGKILL (a watchdog shell stops it when this process is gone).
 *
 * As root (CI containers), initdb and postgres refuse to run: they run as `nobody` then.
 *
 * Tests do not call this directly: AGENTSHELF_TEST_STORE=postgres makes the store helpers
 * (test/support/store.ts) give each test a fresh database copied from a migrated template.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface PgCluster {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The cluster's directory (data/, the socket, the log). */
  dir: string;
  /** DATABASE_URL of one database of this cluster (with options, if given). */
  url(database: string, options?: Record<string, string>): string;
  /** Runs SQL on the `postgres` database as the superuser. */
  admin(sqlText: string): Promise<void>;
  /** Stops the server (fast shutdown: clients are disconnected). */
  stop(): void;
  /** Starts it again, on the same port. */
  start(): void;
  /** Stops the server and removes its directory. */
  destroy(): void;
}

/** Where Debian's PostgreSQL binaries are (PG_BIN, or the newest /usr/lib/postgresql/N/bin). */
export function postgresBin(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const asRoot = process.getuid?.() === 0;

/** argv to run a PostgreSQL binary as an unprivileged user when we are root. */
function unprivileged(command: string, args: string[]): [string, string[]] {
  return asRoot
    ? ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', command, ...args]]
    : [command, args];
}

function run(command: string, args: string[]): void {
  const [cmd, argv] = unprivileged(command, args);
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(
      `${path.basename(command)} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`,
    );
  }
}

/**
 * A running cluster that several processes share (the PostgreSQL pass of run-tests.ts starts
 * one for all its test processes): where it listens and who to log in as.
 */
export interface PgShared {
  host: string;
  port: number;
  user: string;
  password: string;
  dir: string;
}

/**
 * A cluster another process started and owns (`PgShared`): connect to it, create databases on
 * it; stopping, starting or removing it is refused, as other processes are using it.
 */
export function attachPgCluster(shared: PgShared): PgCluster {
  const owned = (what: string) => () => {
    throw new Error(
      `${what}: this cluster is shared by the whole test pass; start one of your own (startPgCluster) to ${what} it`,
    );
  };
  return {
    ...clientOf(shared),
    stop: owned('stop'),
    start: owned('start'),
    destroy: owned('destroy'),
  };
}

/** What a cluster's clients need of it: where it is, its URLs, and SQL as the superuser. */
function clientOf(shared: PgShared): Omit<PgCluster, 'stop' | 'start' | 'destroy'> {
  const { host, port, user, password } = shared;
  return {
    ...shared,
    url: (database, options = {}) => {
      const query = new URLSearchParams(options).toString();
      return `postgres://${user}:${encodeURIComponent(password)}@${host}:${port}/${database}${query ? `?${query}` : ''}`;
    },
    admin: async (sqlText) => {
      const client = new pg.Client({ host, port, user, password, database: 'postgres' });
      await client.connect();
      try {
        await client.query(sqlText);
      } finally {
        await client.end();
      }
    },
  };
}

/** A server certificate and its key (PEM), for a cluster started with `ssl=on`. */
export interface PgTls {
  cert: string;
  key: string;
}

/**
 * Starts a fresh cluster (initdb); with `tls`, `ssl=on` with that certificate (clients may
 * still connect without TLS); `maxConnections` 200 unless given.
 */
export async function startPgCluster(
  options: { tls?: PgTls; maxConnections?: number } = {},
): Promise<PgCluster> {
  const bin = postgresBin();
  if (!bin) {
    throw new Error(
      'PostgreSQL is not installed: apt-get install postgresql (Debian), or set PG_BIN to the directory of initdb and pg_ctl',
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentshelf-pg-'));
  const data = path.join(dir, 'data');
  const user = 'agentshelf';
  const password = randomBytes(12).toString('base64url');
  fs.writeFileSync(path.join(dir, 'pwfile'), `${password}\n`);
  if (asRoot) execFileSync('chown', ['-R', 'nobody:nogroup', dir]);
  fs.chmodSync(dir, 0o700);
  try {
    run(path.join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      user,
      `--pwfile=${path.join(dir, 'pwfile')}`,
      '--auth-host=scram-sha-256',
      '--auth-local=trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    fs.rmSync(path.join(dir, 'pwfile'), { force: true });
  }
  const port = await freePort();
  const host = '127.0.0.1';
  let tlsFlags = '';
  if (options.tls) {
    // PostgreSQL wants its key readable by its own user alone.
    const cert = path.join(dir, 'server.crt');
    const key = path.join(dir, 'server.key');
    fs.writeFileSync(cert, options.tls.cert);
    fs.writeFileSync(key, options.tls.key, { mode: 0o600 });
    if (asRoot) execFileSync('chown', ['nobody:nogroup', cert, key]);
    tlsFlags = ` -c ssl=on -c ssl_cert_file=${cert} -c ssl_key_file=${key}`;
  }
  const start = () =>
    run(path.join(bin, 'pg_ctl'), [
      '-D',
      data,
      '-l',
      path.join(dir, 'log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=${host} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=${options.maxConnections ?? 200}${tlsFlags}`,
      'start',
    ]);
  start();
  let stopped = false;
  const stop = (mode: 'fast' | 'immediate' = 'fast') => {
    const [cmd, argv] = unprivileged(path.join(bin, 'pg_ctl'), [
      '-D',
      data,
      '-m',
      mode,
      '-w',
      'stop',
    ]);
    spawnSync(cmd, argv, { stdio: 'ignore' });
  };
  // Gone with this process, however it ends.
  const [wcmd, wargv] = [
    'sh',
    [
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${unprivileged(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']).flat().join(' ')} >/dev/null 2>&1; rm -rf ${dir}`,
    ],
  ];
  spawn(wcmd, wargv as string[], { detached: true, stdio: 'ignore' }).unref();
  const destroy = () => {
    if (stopped) return;
    stopped = true;
    stop('immediate');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', destroy);

  return {
    ...clientOf({ host, port, user, password, dir }),
    stop: () => stop('fast'),
    start,
    destroy,
  };
}
