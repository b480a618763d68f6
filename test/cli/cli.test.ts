import http from 'node:http';
import t from 'tap';
import { runCli, startServe } from '../support/cli.js';
import { emptyDatabaseUrl, onPostgres, testStoreEnv } from '../support/store.js';

/** A fresh store for `dir`: DATA_DIR, and DATABASE_URL on PostgreSQL. */
async function storeEnv(dir: string): Promise<Record<string, string>> {
  return { DATA_DIR: dir, ...(await testStoreEnv(dir)) };
}

const VERBS = ['serve', 'migrate', 'keys', 'seed', 'openapi', 'store'];

t.test(
  'every verb prints --help and exits 0; unknown verbs and flags exit 2 with usage',
  async (t) => {
    const top = runCli(['--help']);
    t.equal(top.status, 0);
    for (const verb of VERBS) {
      t.match(top.stdout, new RegExp(`\\n  ${verb}\\s`), `${verb} is listed`);
      const help = runCli([verb, '--help']);
      t.equal(help.status, 0, `${verb} --help`);
      t.match(
        help.stdout,
        new RegExp(`^Usage: agentshelf ${verb}`),
        `${verb} --help prints its usage`,
      );
    }
    const unknown = runCli(['frobnicate']);
    t.equal(unknown.status, 2);
    t.match(unknown.stderr, /unknown command 'frobnicate'/);
    const badFlag = runCli(['seed', '--nope']);
    t.equal(badFlag.status, 2);
    t.match(badFlag.stderr, /Unknown option '--nope'/);
    t.match(badFlag.stderr, /Usage: agentshelf seed/);
  },
);

t.test(
  'keys create prints the key alone; list shows it masked; revoke holds across processes',
  async (t) => {
    const dir = t.testdir({});
    const env = await storeEnv(dir);
    const created = runCli(['keys', 'create', '--level', 'read_write', '--name', 'shop'], env);
    t.equal(created.status, 0, created.stderr);
    t.match(created.stdout, /^ask_live_[A-Za-z0-9]{40}\n$/, 'the key, alone, on stdout');
    const key = created.stdout.trim();
    const json = JSON.parse(runCli(['keys', 'list', '--json'], env).stdout);
    t.equal(json.length, 1);
    t.equal(json[0].last4, key.slice(-4));
    t.equal(json[0].name, 'shop');
    const list = runCli(['keys', 'list'], env).stdout;
    t.notMatch(list, key);
    t.match(list, new RegExp(`ask_live_\\.\\.\\.${key.slice(-4)}`));
    const badLevel = runCli(['keys', 'create', '--level', 'root'], env);
    t.equal(badLevel.status, 2);
    t.match(badLevel.stderr, /--level must be one of read_only, read_write, admin/);
    t.equal(runCli(['keys', 'create'], env).status, 2, 'keys create needs --level');

    // A running server sees a revocation made by another process on the next request.
    const serve = await startServe(env);
    t.teardown(() => serve.child.kill('SIGKILL'));
    t.notMatch(serve.stdout(), /No API key existed/, 'no admin key is created when one exists');
    const auth = { authorization: `Bearer ${key}` };
    t.equal((await fetch(`${serve.url}/v1/products`, { headers: auth })).status, 200);
    const revoked = runCli(['keys', 'revoke', json[0].id], env);
    t.equal(revoked.status, 0, revoked.stderr);
    t.match(revoked.stdout, /^revoked key_/);
    t.equal((await fetch(`${serve.url}/v1/products`, { headers: auth })).status, 401);
    t.equal(runCli(['keys', 'revoke', 'key_nope'], env).status, 1);
    serve.child.kill('SIGTERM');
    t.equal(await serve.exited, 0);
  },
);

t.test(
  'first serve on an empty store creates an admin key, prints it once, and never logs it',
  async (t) => {
    const dir = t.testdir({});
    const env = await storeEnv(dir);
    const serve = await startServe(env);
    t.teardown(() => serve.child.kill('SIGKILL'));
    const key = /\n {4}(ask_live_[A-Za-z0-9]{40})\n/.exec(serve.stdout())?.[1];
    t.ok(key, 'the admin key is printed');
    const res = await fetch(`${serve.url}/v1/api-keys`, {
      headers: { authorization: `Bearer ${key}` },
    });
    t.equal(res.status, 200, 'it is an admin key');
    serve.child.kill('SIGTERM');
    await serve.exited;
    const logs = serve
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    t.ok(logs.length > 0);
    t.notOk(
      logs.some((l) => l.includes(key!)),
      'the key is in no log line',
    );
    const again = await startServe(env);
    t.teardown(() => again.child.kill('SIGKILL'));
    t.notMatch(again.stdout(), /ask_live_/, 'a second start prints no key');
    again.child.kill('SIGTERM');
    await again.exited;
  },
);

t.test(
  'seed --demo writes a multi-brand catalogue with variants once; --if-empty keeps it once',
  async (t) => {
    const dir = t.testdir({});
    const env = await storeEnv(dir);
    const seeded = runCli(['seed', '--demo', '--json'], env);
    t.equal(seeded.status, 0, seeded.stderr);
    const count = JSON.parse(seeded.stdout).seeded;
    t.ok(count >= 50 && count <= 70, `about 60 products (${count})`);
    t.same(JSON.parse(runCli(['seed', '--demo', '--if-empty', '--json'], env).stdout), {
      seeded: 0,
    });
    const { openStore } = await import('../../src/db/store.js');
    const { loadConfig } = await import('../../src/config.js');
    const store = openStore(loadConfig(env));
    t.teardown(() => store.close());
    const rows = await store.db.selectFrom('products').selectAll().execute();
    const brands = new Set(rows.map((r) => r.brand).filter(Boolean));
    t.ok(brands.size >= 3, `${brands.size} brands`);
    const attributes = rows.map((r) => JSON.parse(r.attributes));
    const groups = new Map<string, number>();
    for (const a of attributes)
      if (a.item_group_id) groups.set(a.item_group_id, (groups.get(a.item_group_id) ?? 0) + 1);
    t.ok([...groups.values()].filter((n) => n > 1).length >= 5, 'several variant groups');
    t.ok(
      rows.every((r) => JSON.parse(r.images).length > 0),
      'every product has images',
    );
    t.ok(attributes.filter((a) => a.gtin).length >= 50, 'gtins');
    t.ok(
      rows.some((r) => (r.category ?? '').split(' > ').length === 3) &&
        rows.some((r) => (r.category ?? '').split(' > ').length <= 2),
      'categories of 2-3 levels',
    );
    const events = await store.db.selectFrom('events').select('type').execute();
    t.equal(events.length, count, 'each demo product recorded product.created');
  },
);

t.test('seed --synthetic N adds N products, continuing ids', async (t) => {
  const dir = t.testdir({});
  const env = await storeEnv(dir);
  t.same(JSON.parse(runCli(['seed', '--synthetic', '250', '--json'], env).stdout), { seeded: 250 });
  t.same(JSON.parse(runCli(['seed', '--synthetic', '10', '--json'], env).stdout), { seeded: 10 });
  t.equal(runCli(['seed', '--synthetic', 'abc'], env).status, 2);
  t.equal(runCli(['seed'], env).status, 2);
  const serve = await startServe(env);
  t.teardown(() => serve.child.kill('SIGKILL'));
  const key = runCli(['keys', 'create', '--level', 'read_only'], env).stdout.trim();
  const res: any = await (
    await fetch(`${serve.url}/v1/products?limit=1&offset=259`, {
      headers: { authorization: `Bearer ${key}` },
    })
  ).json();
  t.equal(res.pagination.total, 260);
  t.equal(res.products[0].id, 'syn_00000259');
  serve.child.kill('SIGTERM');
  await serve.exited;
});

t.test('SIGTERM stops accepting, finishes the request in flight, and exits 0', async (t) => {
  const dir = t.testdir({});
  const env = await storeEnv(dir);
  const key = runCli(['keys', 'create', '--level', 'read_write'], env).stdout.trim();
  const serve = await startServe(env);
  t.teardown(() => serve.child.kill('SIGKILL'));
  const url = new URL(`${serve.url}/v1/products`);
  const body = JSON.stringify({ id: 'INFLIGHT', name: 'In flight', price: 5 });
  // Send half the body, signal, then the rest: the request is in flight across the signal.
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: data }));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
    setTimeout(() => {
      serve.child.kill('SIGTERM');
      setTimeout(() => req.end(body.slice(10)), 300);
    }, 300);
  });
  const res = await response;
  t.equal(res.status, 201, 'the request in flight completed');
  t.equal(JSON.parse(res.body).id, 'INFLIGHT');
  t.equal(await serve.exited, 0);
  await t.rejects(fetch(`${serve.url}/v1/products`), 'no longer accepting');
  t.match(serve.stdout(), /shutting down/);
  const again = await startServe(env);
  t.teardown(() => again.child.kill('SIGKILL'));
  const got = await fetch(`${again.url}/v1/products/INFLIGHT`, {
    headers: { authorization: `Bearer ${key}` },
  });
  t.equal(got.status, 200, 'the product was committed before the store closed');
  again.child.kill('SIGINT');
  t.equal(await again.exited, 0, 'SIGINT too');
});

t.test('migrate is idempotent', async (t) => {
  const dir = t.testdir({});
  // An empty store: on PostgreSQL an empty database (testStoreEnv's are migrated).
  const env: Record<string, string> = onPostgres()
    ? { DATA_DIR: dir, DATABASE_URL: await emptyDatabaseUrl() }
    : { DATA_DIR: dir };
  const first = runCli(['migrate'], env);
  t.match(first.stdout, /applied 20261121000000_initial/);
  t.match(runCli(['migrate'], env).stdout, /is up to date/);
  const bad = runCli(['migrate'], { ...env, PORT: 'eighty' });
  t.equal(bad.status, 2);
  t.match(bad.stderr, /configuration error: PORT/);
});
