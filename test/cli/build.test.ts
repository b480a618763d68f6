import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { formatProgress } from '../../src/cli/progress.js';
import { seedSynthetic } from '../../src/seed/synthetic.js';
import {
  CLI,
  cliEnv,
  createFeed,
  feedPath,
  runCli,
  temporaries,
  waitFor,
} from '../support/feeds.js';
import { productBody, startTestServer } from '../support/server.js';

t.test('build prints one summary line per feed and exits 0', async (t) => {
  const s = await startTestServer(t);
  await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
  await s.request('POST', '/v1/products', { body: productBody({ id: 'B', images: [] }) });
  const a = await createFeed(s, { name: 'Shoes', format: 'json' });
  const b = await createFeed(s, { name: 'Shoes XML', format: 'xml' });
  const res = await runCli(['build'], cliEnv(s));
  t.equal(res.code, 0, res.stderr);
  const lines = res.stdout.trim().split('\n');
  t.equal(lines.length, 3, 'two feeds, then the discovery registry');
  t.match(lines[2], /^discovery: 1 brands, 2 products; rebuilt 1, /);
  t.match(
    lines[0],
    new RegExp(
      `^${a.id} json "Shoes": 2 products, 2 with errors, 2 with warnings, published in \\d+\\.\\d+ s$`,
    ),
  );
  t.match(lines[1], new RegExp(`^${b.id} xml "Shoes XML": 2 products`));
  t.equal(res.stderr, '', 'nothing on stderr when not a terminal');
  t.ok(fs.existsSync(feedPath(s, a.id, 'json')));

  const again = await runCli(['build'], cliEnv(s));
  t.match(again.stdout, /2 products, 2 with errors, 2 with warnings, unchanged in/);
});

t.test('build --json prints the run as one JSON object', async (t) => {
  const s = await startTestServer(t);
  await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
  const feed = await createFeed(s, { name: 'F', format: 'csv' });
  const res = await runCli(['build', '--json'], cliEnv(s));
  t.equal(res.code, 0);
  const out = JSON.parse(res.stdout);
  t.match(out, {
    run_id: 1,
    status: 'succeeded',
    failures: [],
    stages: [
      {
        stage: 'feeds',
        failures: [],
        outputs: [{ name: feed.id, ok: true, products: 1, changed: true }],
      },
    ],
  });
  t.ok(out.peak_rss_bytes > 10_000_000, 'peak memory in bytes');
  t.type(out.duration_ms, 'number');
});

t.test('build exits 1 and names the feed that failed', async (t) => {
  const s = await startTestServer(t);
  await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
  const ok = await createFeed(s, { name: 'Fine', format: 'json' });
  const bad = await createFeed(s, { name: 'Doomed', format: 'csv' });
  fs.mkdirSync(`${feedPath(s, bad.id, 'csv')}/in-the-way`, { recursive: true });
  const res = await runCli(['build'], cliEnv(s));
  t.equal(res.code, 1);
  t.match(res.stderr, `agentshelf build: failed: ${bad.id} ("Doomed")`);
  t.match(res.stdout, new RegExp(`${bad.id} csv "Doomed": FAILED: `));
  t.match(res.stdout, new RegExp(`${ok.id} json "Fine": 1 products`));
});

t.test('build --help explains itself; an unknown flag is a usage error', async (t) => {
  const help = await runCli(['build', '--help'], { PATH: process.env.PATH ?? '' });
  t.equal(help.code, 0);
  t.match(help.stdout, /^Usage: agentshelf build \[--wait SECONDS\] \[--json\]/);
  t.match(help.stdout, /Exit status: 0 when every feed was published, 1 when one failed/);
  const bad = await runCli(['build', '--fast'], { PATH: process.env.PATH ?? '' });
  t.equal(bad.code, 2);
  t.match(bad.stderr, /Unknown option '--fast'/);
  const wait = await runCli(['build', '--wait', 'soon'], { PATH: process.env.PATH ?? '' });
  t.equal(wait.code, 2);
  t.match(wait.stderr, /--wait must be a whole number/);
});

t.test('progress shows products done, products per second and the time left', async (t) => {
  t.equal(
    formatProgress({ stage: 'feeds', done: 50_000, total: 200_000 }, 500),
    'feeds  50,000 / 200,000 products  100,000/s  ETA 2 s',
  );
  t.equal(
    formatProgress({ stage: 'feeds', done: 1_000, total: 1_000_000 }, 1_000),
    'feeds  1,000 / 1,000,000 products  1,000/s  ETA 16 min 39 s',
  );
  t.equal(
    formatProgress({ stage: 'feeds', done: 10, total: 10 }, 1_000),
    'feeds  10 / 10 products  10/s',
    'no ETA once done',
  );
  t.equal(formatProgress({ stage: 'feeds', done: 0, total: 0 }, 0), 'feeds  0 / 0 products  0/s');
});

t.test('on a terminal, build draws its progress on stderr', async (t) => {
  const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
  const skip = script.error ? 'script (util-linux) is not installed' : false;
  await t.test('through a pseudo-terminal', { skip }, async (t) => {
    const s = await startTestServer(t);
    await s.request('POST', '/v1/products', { body: productBody({ id: 'A' }) });
    await createFeed(s, { name: 'F', format: 'json' });
    // script(1) gives the child a terminal and copies what it writes to our stdout.
    const res = spawnSync('script', ['-qec', `${process.execPath} ${CLI} build`, '/dev/null'], {
      encoding: 'utf8',
      env: cliEnv(s),
    });
    t.equal(res.status, 0, res.stderr);
    t.match(res.stdout, /feeds {2}1 \/ 1 products {2}[\d,]+\/s/, 'a progress line');
    t.ok(res.stdout.includes('\r\u001b[2K'), 'redrawn in place');
    t.match(res.stdout, /"F": 1 products/, 'then the summary');
  });
});

t.test('SIGTERM stops a build cleanly: exit 130, files as they were, lock free', async (t) => {
  const s = await startTestServer(t);
  await seedSynthetic(s.server.store.db, { count: 15_000, brands: 5 });
  const feed = await createFeed(s, { name: 'F', format: 'csv' });
  const dir = path.join(s.config.DATA_DIR, 'feeds');
  const child = spawn(process.execPath, [CLI, 'build'], {
    env: cliEnv(s),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(() => temporaries(dir).length > 0, 120_000, 'the build writing');
  child.kill('SIGTERM');
  t.equal(await exited, 130);
  t.match(stderr, /interrupted; published files are as they were/);
  t.same(temporaries(dir), [], 'its temporary files are gone');
  t.notOk(fs.existsSync(feedPath(s, feed.id, 'csv')), 'nothing half-done was published');
  const lock = await s.server.store.db
    .selectFrom('pipeline_lock')
    .selectAll()
    .executeTakeFirstOrThrow();
  t.equal(lock.holder, null, 'the lock is free');
  const run = await s.server.store.db
    .selectFrom('pipeline_runs')
    .select('status')
    .executeTakeFirstOrThrow();
  t.equal(run.status, 'aborted');
  t.equal((await s.request('GET', `/v1/feeds/${feed.id}`)).body.status, 'processing', 'not failed');
});
