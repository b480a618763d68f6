import t from 'tap';
import { runCli, runCliAsync, startServe } from '../support/cli.js';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/db/store.js';
import { waitUntil } from '../support/receiver.js';
import { startTestServer } from '../support/server.js';

t.test('keys create, list and revoke act on the store a running server uses', async (t) => {
  const s = await startTestServer(t);
  const env = {
    DATA_DIR: s.dir,
    ...(s.config.DATABASE_URL ? { DATABASE_URL: s.config.DATABASE_URL } : {}),
  };

  const created = await runCliAsync(
    ['keys', 'create', '--level', 'read_only', '--plan', 'pro', '--rpm', '5', '--name', 'cli key'],
    env,
  );
  t.equal(created.status, 0, created.stderr);
  const secret = created.stdout.trim();
  t.match(secret, /^ask_live_[A-Za-z0-9]{40}$/, 'stdout is the key alone');
  const used = await s.request('GET', '/v1/products', { key: secret });
  t.equal(used.status, 200);
  t.equal(used.headers.get('x-ratelimit-limit'), '5', 'the override is in force');

  const listed = await runCliAsync(['keys', 'list', '--json'], env);
  t.equal(listed.status, 0);
  t.notOk(listed.stdout.includes(secret), 'the list never shows a key');
  const keys = JSON.parse(listed.stdout) as any[];
  const mine = keys.find((k) => k.name === 'cli key');
  t.match(mine, {
    id: /^key_/,
    level: 'read_only',
    prefix: 'ask_live_',
    last4: secret.slice(-4),
    plan: 'pro',
    rpm: 5,
    limits: { per_minute: 5, burst_per_minute: 2000, monthly: 100000 },
    revoked_at: null,
  });
  const api = await s.request('GET', '/v1/api-keys');
  t.same(
    api.body.api_keys.find((k: any) => k.id === mine.id),
    mine,
    'the CLI and the API present a key the same way',
  );
  const table = await runCliAsync(['keys', 'list'], env);
  t.match(table.stdout, /^ID\tLEVEL\tPLAN\tLIMITS\tKEY\tCREATED\tLAST USED\tREVOKED\tNAME$/m);
  t.match(
    table.stdout,
    `${mine.id}\tread_only\tpro\t5/min, 2000 burst/min, 100000/month\task_live_...${secret.slice(-4)}`,
  );

  const revoked = await runCliAsync(['keys', 'revoke', mine.id], env);
  t.equal(revoked.status, 0);
  t.match(revoked.stdout, `revoked ${mine.id} at `);
  t.equal(
    (await s.request('GET', '/v1/products', { key: secret })).status,
    401,
    'the running server refuses the key on its next request',
  );
});

t.test('keys verbs name the flag at fault, and an unknown id in words', async (t) => {
  const env = { DATA_DIR: t.testdir({}) };
  const badPlan = runCli(['keys', 'create', '--level', 'admin', '--plan', 'gold'], env);
  t.equal(badPlan.status, 2);
  t.match(badPlan.stderr, /--plan must be one of starter, pro, enterprise, scale/);
  const badRpm = runCli(['keys', 'create', '--level', 'admin', '--rpm', 'lots'], env);
  t.equal(badRpm.status, 2);
  t.match(badRpm.stderr, /--rpm must be a whole number/);
  const unknown = runCli(['keys', 'revoke', 'key_nope'], env);
  t.equal(unknown.status, 1);
  t.match(unknown.stderr, "error: No API key with id 'key_nope'.");
});

t.test(
  'a crash keeps the usage counts and audit entries flushed before it; SIGTERM keeps them all',
  async (t) => {
    const dir = t.testdir({});
    const env = { DATA_DIR: dir, USAGE_FLUSH_MS: '20', AUDIT_FLUSH_MS: '20' };
    const admin = runCli(
      ['keys', 'create', '--level', 'admin', '--plan', 'scale'],
      env,
    ).stdout.trim();
    const key = JSON.parse(
      runCli(['keys', 'create', '--level', 'read_only', '--monthly', '5', '--json'], env).stdout,
    );
    const get = (url: string, secret: string, path = '/v1/products') =>
      fetch(url + path, { headers: { authorization: `Bearer ${secret}`, prefer: 'envelope' } });

    const first = await startServe(env);
    for (let i = 0; i < 3; i++) t.equal((await get(first.url, key.key)).status, 200);
    // Killed once both flushes (every 20 ms) have written the three requests: the store is read
    // until they are there, however busy the machine.
    const store = openStore(loadConfig(env));
    await waitUntil('the three requests flushed', async () => {
      const usage = await store.db
        .selectFrom('api_key_usage')
        .select('requests')
        .where('api_key_id', '=', key.id)
        .executeTakeFirst();
      const audit = await store.db
        .selectFrom('audit_log')
        .select('id')
        .where('api_key_id', '=', key.id)
        .execute();
      return (usage?.requests === 3 && audit.length === 3) || undefined;
    });
    await store.close();
    first.child.kill('SIGKILL');
    await first.exited;

    // Long intervals from here on: only the shutdown flush can write.
    const patient = { ...env, USAGE_FLUSH_MS: '60000', AUDIT_FLUSH_MS: '60000' };
    const second = await startServe(patient);
    t.equal((await get(second.url, key.key)).status, 200, 'request 4 of 5');
    second.child.kill('SIGTERM');
    t.equal(await second.exited, 0);

    const third = await startServe(patient);
    t.teardown(() => {
      third.child.kill('SIGKILL');
    });
    t.equal((await get(third.url, key.key)).status, 200, 'request 5 of 5');
    const refused = await get(third.url, key.key);
    t.equal(refused.status, 429);
    t.equal(((await refused.json()) as any).error.code, 'QUOTA_EXCEEDED');
    const audit = (await (
      await get(third.url, admin, `/v1/audit-log?key_id=${key.id}`)
    ).json()) as any;
    t.same(
      audit.data.entries.map((e: any) => e.status),
      [429, 200, 200, 200, 200, 200],
      'entries before the crash (flushed) and before SIGTERM (flushed on shutdown) are all there',
    );
    third.child.kill('SIGTERM');
    await third.exited;
  },
);
