import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MAIN, runCliAsync } from '../support/cli.js';
import { startTestServer } from '../support/server.js';
import { startFeedServer } from '../support/feed-server.js';
import { eventsAfter, feedProduct, jsonl } from '../support/integrations.js';
import { deriveKey, keyIdOf } from '../../src/domain/integrations/secret-box.js';
import { INTERRUPTED } from '../../src/domain/integrations/sync.js';

const PRIVATE = { ALLOW_PRIVATE_TARGETS: 'true' };

/** What a CLI child needs to use a test server's store: DATA_DIR, and DATABASE_URL on PostgreSQL. */
function storeOf(server: { dir: string; config: { DATABASE_URL?: string } }) {
  const url = server.config.DATABASE_URL;
  return { DATA_DIR: server.dir, ...(url ? { DATABASE_URL: url } : {}) };
}

/** Runs the CLI and resolves with how it ended (exit code or signal). */
function runToEnd(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout.resume();
  return new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    pid: number;
    stderr: string;
  }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, pid: child.pid!, stderr })),
  );
}

t.test('integrations --help, and a usage error', async (t) => {
  const help = await runCliAsync(['integrations', '--help']);
  t.equal(help.status, 0);
  t.match(help.stdout, /integrations sync ID/);
  t.match(help.stdout, /rotate-key/);
  const bad = await runCliAsync(['integrations', 'frobnicate']);
  t.equal(bad.status, 2);
  t.match(bad.stderr, /unknown integrations command/);
});

t.test(
  'a sync killed mid-run is marked failed at the next start; the next run starts over',
  async (t) => {
    const feeds = await startFeedServer(t);
    feeds.set('/p.jsonl', jsonl(['P1', 'P2', 'P3', 'P4', 'P5'].map((id) => feedProduct(id))));
    let server = await startTestServer(t, PRIVATE);
    const dir = server.dir;
    const env = { ...storeOf(server), ...PRIVATE, SYNC_BATCH_SIZE: '2' };
    const id = (
      await server.request('POST', '/v1/integrations', {
        body: { platform: 'feed', settings: { url: feeds.url('/p.jsonl') } },
      })
    ).body.id as string;

    const runs = () =>
      server.server.store.db
        .selectFrom('sync_runs')
        .selectAll()
        .orderBy('started_at')
        .orderBy('id')
        .execute();

    // 1. Killed (SIGKILL) right after its first batch was staged: the run row says running,
    // and nothing was applied (a sync is all or nothing).
    const killed = await runToEnd(['integrations', 'sync', id], {
      ...env,
      AGENTSHELF_TEST_CRASH: 'sync-after-batch',
    });
    t.equal(killed.signal, 'SIGKILL', killed.stderr);
    let rows = await runs();
    t.match(rows, [{ status: 'running', pid: killed.pid, fetched: 2, created: 0 }]);
    t.equal(
      (await server.request('GET', '/v1/products')).body.products.length,
      0,
      'nothing of the killed run was applied',
    );
    const staged = () =>
      server.server.store.db.selectFrom('sync_staged_items').selectAll().execute();
    t.equal((await staged()).length, 2, 'its first batch is staged');
    t.equal(
      (await server.request('POST', `/v1/integrations/${id}/sync`)).status,
      202,
      'a dead run does not block a new one',
    );
    // (That sync runs in this process; wait for it, then crash another one for the start checks.)
    const mine = (await runs()).at(-1)!;
    await server.server.deps.integrations!.settled(mine.id);
    rows = await runs();
    t.match(rows[0], { status: 'failed', error: INTERRUPTED, created: 0 });
    t.match(rows[1], { status: 'succeeded', fetched: 5, created: 5, unchanged: 0 });
    t.equal((await staged()).length, 0, 'what the killed run staged is gone');

    // 2. The CLI's start marks a killed run failed.
    feeds.set(
      '/p.jsonl',
      jsonl(
        ['P1', 'P2', 'P3', 'P4', 'P5', 'P6'].map((id) => feedProduct(id, { price: '7.00 USD' })),
      ),
    );
    const again = await runToEnd(['integrations', 'sync', id], {
      ...env,
      AGENTSHELF_TEST_CRASH: 'sync-after-batch',
    });
    t.equal(again.signal, 'SIGKILL');
    t.equal((await runs()).at(-1)!.status, 'running');
    const listed = await runCliAsync(['integrations', 'list', '--json'], env);
    t.equal(listed.status, 0, listed.stderr);
    t.match(JSON.parse(listed.stdout), [{ id, sync_status: 'idle', status: 'connected' }]);
    t.match((await runs()).at(-1), { status: 'failed', error: INTERRUPTED });

    // 3. serve's start marks a killed run failed.
    const third = await runToEnd(['integrations', 'sync', id], {
      ...env,
      AGENTSHELF_TEST_CRASH: 'sync-after-batch',
    });
    t.equal(third.signal, 'SIGKILL');
    await server.server.close();
    server = await startTestServer(t, PRIVATE, { dir });
    t.match((await runs()).at(-1), { status: 'failed', error: INTERRUPTED });
    const failedEvents = (await eventsAfter(server.server.store.db, 0)).filter(
      (e) => e.type === 'integration.sync.failed',
    );
    t.equal(failedEvents.length, 3, 'each interrupted run was announced');

    // 4. The next run starts over and finishes: every product at the new price, none twice.
    const done = await runCliAsync(['integrations', 'sync', id, '--json'], env);
    t.equal(done.status, 0, done.stderr);
    const run = JSON.parse(done.stdout);
    t.match(run, { status: 'succeeded', fetched: 6, failed: 0 });
    t.equal(run.created + run.updated + run.unchanged, 6);
    const products = (await server.request('GET', '/v1/products?limit=250')).body.products;
    t.equal(products.length, 6);
    t.ok(
      products.every((p: any) => p.price === 7),
      'every product at the new price',
    );
    const text = await runCliAsync(['integrations', 'list'], env);
    t.match(text.stdout, new RegExp(`${id}\\tfeed\\t.*\\tconnected\\t6\\t`));
  },
);

t.test(
  'rotate-key re-encrypts every credential, from the key file to SECRET_KEY and back',
  async (t) => {
    const feeds = await startFeedServer(t);
    feeds.set('/p.jsonl', jsonl([feedProduct('R1')]));
    const server = await startTestServer(t, PRIVATE);
    const dir = server.dir;
    const created = await server.request('POST', '/v1/integrations', {
      body: {
        platform: 'feed',
        settings: { url: feeds.url('/p.jsonl') },
        credentials: { username: 'u', password: 'p4ss' },
      },
    });
    const id = created.body.id as string;
    const stored = async () =>
      (
        await server.server.store.db
          .selectFrom('integrations')
          .select('credentials')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).credentials!;
    const keyFile = path.join(dir, 'secret.key');
    const fileKey = deriveKey(fs.readFileSync(keyFile, 'utf8').trim(), 'file');
    t.equal(keyIdOf(await stored()), fileKey.id, 'encrypted with the key file');

    // To SECRET_KEY: old values are read with the key file.
    const secret = 'a-new-secret-key-of-at-least-32-characters';
    const env = { ...storeOf(server), ...PRIVATE, SECRET_KEY: secret };
    const rotated = await runCliAsync(['integrations', 'rotate-key', '--json'], env);
    t.equal(rotated.status, 0, rotated.stderr);
    t.match(JSON.parse(rotated.stdout), {
      reencrypted: 1,
      current: 0,
      key_id: deriveKey(secret, 'x').id,
    });
    t.equal(keyIdOf(await stored()), deriveKey(secret, 'x').id);
    fs.rmSync(keyFile);
    const synced = await runCliAsync(['integrations', 'sync', id, '--json'], env);
    t.equal(synced.status, 0, `the credentials decrypt with SECRET_KEY alone: ${synced.stderr}`);

    // A changed SECRET_KEY: OLD_SECRET_KEY reads the old values.
    const next = 'another-secret-key-also-at-least-32-chars';
    const wrong = await runCliAsync(['integrations', 'rotate-key'], { ...env, SECRET_KEY: next });
    t.equal(wrong.status, 1, 'without the old key nothing decrypts');
    t.match(wrong.stderr, /OLD_SECRET_KEY/);
    t.equal(keyIdOf(await stored()), deriveKey(secret, 'x').id, 'and nothing changed');
    const moved = await runCliAsync(['integrations', 'rotate-key'], {
      ...env,
      SECRET_KEY: next,
      OLD_SECRET_KEY: secret,
    });
    t.equal(moved.status, 0, moved.stderr);
    t.match(moved.stdout, /re-encrypted the credentials of 1 integration/);
    t.equal(keyIdOf(await stored()), deriveKey(next, 'x').id);

    // Back to a key file (no SECRET_KEY): a new file, mode 0600.
    const back = await runCliAsync(['integrations', 'rotate-key', '--json'], {
      ...storeOf(server),
      OLD_SECRET_KEY: next,
    });
    t.equal(back.status, 0, back.stderr);
    t.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
    t.equal(keyIdOf(await stored()), deriveKey(fs.readFileSync(keyFile, 'utf8').trim(), 'f').id);
    t.notOk(fs.existsSync(path.join(dir, 'secret.key.old')));
  },
);

t.test(
  'an OpenAI flat feed syncs into products that the discovery registry publishes',
  async (t) => {
    const feeds = await startFeedServer(t);
    const fixture = fs.readFileSync(
      path.join(import.meta.dirname, '../../../test/fixtures/feeds/openai.jsonl'),
      'utf8',
    );
    feeds.set('/openai.jsonl', fixture);
    const server = await startTestServer(t, PRIVATE);
    const env = {
      ...storeOf(server),
      ...PRIVATE,
      FEEDS_URL: 'https://feeds.example.com',
    };
    const id = (
      await server.request('POST', '/v1/integrations', {
        body: { platform: 'feed', settings: { url: feeds.url('/openai.jsonl') } },
      })
    ).body.id as string;
    const synced = await runCliAsync(['integrations', 'sync', id, '--json'], env);
    t.equal(synced.status, 0, synced.stderr);
    const run = JSON.parse(synced.stdout);
    t.ok(run.created > 0, `${run.created} products created`);
    const built = await runCliAsync(['build'], env);
    t.equal(built.status, 0, built.stderr);
    const publicDir = path.join(server.dir, 'public');
    const index = JSON.parse(fs.readFileSync(path.join(publicDir, 'v1', 'index.json'), 'utf8'));
    const text = JSON.stringify(index);
    t.match(text, /OpenAI/, 'the feed brand is in the registry index');
    const feed = fs
      .readdirSync(path.join(publicDir, 'v1', 'feeds'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.json'));
    const published = feed
      .map((f) => fs.readFileSync(path.join(publicDir, 'v1', 'feeds', f), 'utf8'))
      .join('');
    t.match(published, /Men's Trail Running Shoes/, 'its products are in the brand feed');
  },
);

t.test(
  'one sync at a time across processes: the CLI is refused while serve runs one',
  async (t) => {
    const feeds = await startFeedServer(t);
    feeds.hang('/slow.jsonl');
    const server = await startTestServer(t, PRIVATE);
    const id = (
      await server.request('POST', '/v1/integrations', {
        body: { platform: 'feed', settings: { url: feeds.url('/slow.jsonl') } },
      })
    ).body.id as string;
    const started = await server.request('POST', `/v1/integrations/${id}/sync`);
    t.equal(started.status, 202);
    const cli = await runCliAsync(['integrations', 'sync', id], {
      ...storeOf(server),
      ...PRIVATE,
    });
    t.equal(cli.status, 3, cli.stderr);
    t.match(
      cli.stderr,
      new RegExp(`A sync of integration '${id}' is running \\(${started.body.id}`),
    );
    const listed = await runCliAsync(['integrations', 'list', '--json'], {
      ...storeOf(server),
    });
    t.match(
      JSON.parse(listed.stdout),
      [{ id, sync_status: 'running' }],
      'a live run is not failed by a CLI start',
    );
  },
);
