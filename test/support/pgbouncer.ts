/**
 * A real PgBouncer for tests: Debian's `pgbouncer` (/usr/sbin/pgbouncer, or PGBOUNCER_BIN) in
 * the foreground on a free loopback port, in front of a test cluster (test/support/postgres.ts),
 * with SCRAM passwords as a deployment has them, in the pool mode asked for. Stopped when the
 * test ends. As root (CI containers) it runs as `nobody`: PgBouncer refuses to run as root.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Test } from 'tap';
import type { PgCluster } from './postgres.js';
import { freePort } from './nginx.js';

export const PGBOUNCER = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

/** Why PgBouncer cannot run here, or undefined when it can (tests skip with the reason). */
export function pgbouncerMissing(): string | undefined {
  if (!fs.existsSync(PGBOUNCER)) return `${PGBOUNCER} is missing (apt-get install pgbouncer)`;
  return undefined;
}

export interface PgBouncer {
  port: number;
  /** DATABASE_URL of one of the cluster's databases, through PgBouncer. */
  url(database: string, options?: Record<string, string>): string;
  /** Runs a command of PgBouncer's admin console (`SHOW STATS`, `SHOW SERVERS`): its rows. */
  show(command: string): Promise<Record<string, unknown>[]>;
  /** What PgBouncer logged so far. */
  log(): string;
}

/** Starts PgBouncer in front of `cluster`; resolves once it listens. */
export async function startPgBouncer(
  t: Test,
  cluster: PgCluster,
  options: { poolMode: 'transaction' | 'session'; poolSize: number; ignore?: string[] },
): Promise<PgBouncer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentshelf-pgbouncer-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  fs.writeFileSync(
    path.join(dir, 'userlist.txt'),
    `${quote(cluster.user)} ${quote(cluster.password)}\n`,
  );
  const config = [
    '[databases]',
    `* = host=${cluster.host} port=${cluster.port}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = scram-sha-256',
    `auth_file = ${path.join(dir, 'userlist.txt')}`,
    `admin_users = ${cluster.user}`,
    `pool_mode = ${options.poolMode}`,
    `default_pool_size = ${options.poolSize}`,
    'max_client_conn = 200',
    ...(options.ignore ? [`ignore_startup_parameters = ${options.ignore.join(',')}`] : []),
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'pgbouncer.ini'), `${config}\n`);
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['-R', 'nobody:nogroup', dir]);
  const [cmd, args] = asRoot
    ? [
        'setpriv',
        ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', PGBOUNCER, 'pgbouncer.ini'],
      ]
    : [PGBOUNCER, ['pgbouncer.ini']];
  const child = spawn(cmd, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', stop);
  t.teardown(async () => {
    process.removeListener('exit', stop);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: string) => {
      log += d;
      if (log.includes(`listening on 127.0.0.1:${port}`)) resolve();
    };
    child.stderr.setEncoding('utf8').on('data', onData);
    child.stdout.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => reject(new Error(`pgbouncer exited (${code}): ${log}`)));
    child.once('error', reject);
  });
  const url = (database: string, query: Record<string, string> = {}) => {
    const q = new URLSearchParams(query).toString();
    return `postgres://${cluster.user}:${encodeURIComponent(cluster.password)}@127.0.0.1:${port}/${database}${q ? `?${q}` : ''}`;
  };
  return {
    port,
    url,
    show: async (command) => {
      const client = new pg.Client({
        host: '127.0.0.1',
        port,
        user: cluster.user,
        password: cluster.password,
        database: 'pgbouncer',
      });
      await client.connect();
      try {
        return (await client.query(command)).rows as Record<string, unknown>[];
      } finally {
        await client.end();
      }
    },
    log: () => log,
  };
}
