/**
 * TLS to PostgreSQL against a real server (issue 25): a cluster of its own started with
 * `ssl=on` and a certificate from a throwaway certificate authority made here with openssl.
 * `sslmode=verify-full` with that authority connects (and the session is encrypted); another
 * authority, or a host name the certificate does not carry, is refused with one clear line.
 * Runs in the PostgreSQL pass of `make test` (AGENTSHELF_TEST_STORE=postgres).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { openStoreAt } from '../../../src/db/store.js';
import { startPgCluster } from '../../support/postgres.js';
import { onPostgres } from '../../support/store.js';

const MAIN = path.resolve(import.meta.dirname, '../../../src/main.js');

if (!onPostgres()) {
  t.pass('skipped: runs in the PostgreSQL pass (AGENTSHELF_TEST_STORE=postgres)');
} else {
  await tests();
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** A certificate authority (ca.crt, ca.key) in `dir`, named `name`. */
function makeAuthority(dir: string, name: string): string {
  fs.mkdirSync(dir, { recursive: true });
  openssl(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    ]),
    dir,
  );
  return path.join(dir, 'ca.crt');
}

/** A server certificate for DNS name `host`, signed by the authority in `dir`. */
function makeServerCert(dir: string, host: string): { cert: string; key: string } {
  fs.writeFileSync(
    path.join(dir, 'ext.cnf'),
    `subjectAltName=DNS:${host}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`,
  );
  openssl(
    ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      `/CN=${host}`,
    ]),
    dir,
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
    ].concat(['-out', 'server.crt', '-days', '2', '-extfile', 'ext.cnf']),
    dir,
  );
  return {
    cert: fs.readFileSync(path.join(dir, 'server.crt'), 'utf8'),
    key: fs.readFileSync(path.join(dir, 'server.key'), 'utf8'),
  };
}

async function tests(): Promise<void> {
  t.test('verify-full connects; a wrong authority or host name is refused clearly', async (t) => {
    const dir = t.testdir({});
    const trusted = makeAuthority(path.join(dir, 'ca'), 'agentshelf test CA');
    const other = makeAuthority(path.join(dir, 'other'), 'some other CA');
    const c = await startPgCluster({ tls: makeServerCert(path.join(dir, 'ca'), 'localhost') });
    t.teardown(() => c.destroy());
    const url = (host: string, ca: string) =>
      `postgres://${c.user}:${encodeURIComponent(c.password)}@${host}:${c.port}/postgres?sslmode=verify-full&sslrootcert=${encodeURIComponent(ca)}&connect_timeout=5`;

    const store = openStoreAt({ dialect: 'postgres', url: url('localhost', trusted) });
    t.teardown(() => store.close());
    const { rows } = await sql<{
      ssl: boolean;
    }>`select ssl from pg_stat_ssl where pid = pg_backend_pid()`.execute(store.db);
    t.same(rows, [{ ssl: true }], 'verify-full with the right authority: an encrypted session');

    const migrate = (databaseUrl: string) =>
      spawnSync(process.execPath, [MAIN, 'migrate'], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: databaseUrl,
          DATA_DIR: path.join(dir, 'data'),
        },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const wrongCa = migrate(url('localhost', other));
    t.equal(wrongCa.status, 1, 'another authority: exit 1');
    t.equal(
      wrongCa.stderr.trim(),
      `agentshelf migrate: cannot open the PostgreSQL store at localhost:${c.port}: the server's TLS certificate is not signed by a certificate authority we trust (sslrootcert, or the system's); refused (UNABLE_TO_VERIFY_LEAF_SIGNATURE)`,
    );
    const wrongHost = migrate(url('127.0.0.1', trusted));
    t.equal(wrongHost.status, 1, 'a host name the certificate does not carry: exit 1');
    t.equal(
      wrongHost.stderr.trim(),
      `agentshelf migrate: cannot open the PostgreSQL store at 127.0.0.1:${c.port}: the server's TLS certificate does not name the host 127.0.0.1 (sslmode=verify-full checks it: connect by a name the certificate carries); refused`,
    );
    t.notMatch(wrongCa.stderr + wrongHost.stderr, c.password, 'the password is never shown');
  });
}
