// stores: sqlite-only — the single binary: the one-file executable run as a merchant runs it, on
//   its default store (a SQLite file in DATA_DIR); the same code runs on PostgreSQL in the rest of
//   the suite
/**
 * dist/agentshelf-linux-x64 run as a merchant runs it: a copy alone in an empty directory, with
 * no node on PATH (PATH is an empty directory) and a fresh HOME, through every verb the README
 * starts the demo store with.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ensureBinary, ROOT } from '../support/dist.js';

const VERSION = (
  JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

t.test('the binary migrates, seeds, serves both APIs, builds and stops cleanly', async (t) => {
  const built = ensureBinary();
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'agentshelf-binary-'));
  t.teardown(() => fs.rmSync(top, { recursive: true, force: true }));
  const work = path.join(top, 'work');
  const home = path.join(top, 'home');
  const bin = path.join(top, 'bin'); // PATH: a directory with nothing in it
  for (const dir of [work, home, bin]) fs.mkdirSync(dir);
  const exe = path.join(work, 'agentshelf');
  fs.copyFileSync(built, exe);
  fs.chmodSync(exe, 0o755);
  // Only what a merchant's shell would have; no NODE_*, no npm_*, no XDG_CACHE_HOME.
  const env = { PATH: bin, HOME: home, LOG_LEVEL: 'warn' };
  const run = (args: string[]) => {
    const res = spawnSync(exe, args, { cwd: work, env, encoding: 'utf8' });
    return { status: res.status, stdout: res.stdout, stderr: res.stderr };
  };

  const version = run(['--version']);
  t.equal(version.status, 0, version.stderr);
  t.match(
    version.stdout,
    new RegExp(
      `^agentshelf ${VERSION.replaceAll('.', '\\.')} \\(Node\\.js v\\d+\\.\\d+\\.\\d+\\)\\n$`,
    ),
  );
  t.equal(version.stderr, '', 'no experimental warning');

  const migrated = run(['migrate']);
  t.equal(migrated.status, 0, migrated.stderr);
  t.match(migrated.stdout, /applied .*_initial/);
  const created = run(['keys', 'create', '--level', 'admin', '--name', 'binary']);
  t.equal(created.status, 0, created.stderr);
  t.match(created.stdout, /^ask_live_[A-Za-z0-9]{40}\n$/);
  const key = created.stdout.trim();
  const seeded = run(['seed', '--demo']);
  t.equal(seeded.status, 0, seeded.stderr);
  t.match(seeded.stdout, /seeded the demo catalogue: \d+ products/);
  // The AI agent table is data inside the bundle (src/domain/analytics/ai-agents.json).
  const agents = run(['analytics', 'agents', '--json']);
  t.equal(agents.status, 0, agents.stderr);
  const table = JSON.parse(agents.stdout) as { agents: { name: string; operator: string }[] };
  t.match(
    table.agents.find((a) => a.name === 'GPTBot'),
    { operator: 'OpenAI', kind: 'training' },
  );

  const child = spawn(exe, ['serve'], {
    cwd: work,
    env: { ...env, LOG_LEVEL: 'info', PORT: '0', FEEDS_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  /** Resolves with the first match of `pattern` on serve's stdout (an event, not a delay). */
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(stdout);
        if (!m) return;
        child.stdout.off('data', check);
        resolve(m);
      };
      child.stdout.on('data', check);
      void exited.then(({ code, signal }) =>
        reject(new Error(`serve exited (${code ?? signal}):\n${stdout}\n${stderr}`)),
      );
      check();
    });
  child.stdout.on('data', (d: string) => (stdout += d));

  const api = (await waitFor(/serving the platform API at (http:\/\/\S+)/))[1]!;
  const registry = (await waitFor(/discovery registry: (http:\/\/\S+)\/v1\/index\.json/))[1]!;
  const auth = { authorization: `Bearer ${key}` };

  const products = await fetch(`${api}/v1/products`, { headers: auth });
  t.equal(products.status, 200);
  t.ok(((await products.json()) as any).products.length > 0, 'the demo products are served');
  // The audit log is written by a worker thread, which loads the addon on its own.
  const audit = await fetch(`${api}/v1/audit-log`, { headers: auth });
  t.equal(audit.status, 200);
  t.ok(
    ((await audit.json()) as any).entries.some((e: any) => e.path === '/v1/products'),
    'the audit writer thread wrote the request',
  );

  // serve publishes the registry at start (the output is stale); then it answers.
  await waitFor(/"msg":"pipeline run succeeded"/);
  const index = await fetch(`${registry}/v1/index.json`);
  t.equal(index.status, 200);
  t.ok(((await index.json()) as any).brand_count > 0, 'the discovery index lists the brands');

  // A feed's file is written by a thread of its own, the bundle the binary carries for it.
  const feed = await fetch(`${api}/v1/feeds`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Binary', profile: 'openai', format: 'jsonl' }),
  });
  t.equal(feed.status, 201);
  const feedId = ((await feed.json()) as { id: string }).id;

  const build = run(['build']);
  t.equal(build.status, 0, build.stderr);
  t.match(build.stdout, /discovery: \d+ brands/);
  const lines = fs
    .readFileSync(path.join(work, 'data', 'feeds', `${feedId}.jsonl`), 'utf8')
    .trim()
    .split('\n');
  t.ok(lines.length > 0, 'the feed is published');
  t.ok(
    lines.every((line) => typeof (JSON.parse(line) as { item_id?: unknown }).item_id === 'string'),
    'each line an OpenAI record',
  );

  child.kill('SIGTERM');
  t.same(await exited, { code: 0, signal: null }, 'SIGTERM: a clean exit');
  t.equal(stderr, '', 'nothing on stderr');
  t.match(stdout, /"msg":"stopped"/);

  t.same(fs.readdirSync(work).sort(), ['agentshelf', 'data', 'public'], 'only data and public');
  t.notOk(
    fs.readdirSync(path.join(work, 'data')).some((f) => /-(wal|shm)$/.test(f)),
    'the store was closed (no WAL left)',
  );
  const cache = path.join(home, '.cache', 'agentshelf');
  t.match(fs.readdirSync(cache), [/^better_sqlite3-[0-9a-f]{16}\.node$/], 'one addon, no .tmp');
});

t.test('the binary puts its SQLite addon only where no one else can write', async (t) => {
  const built = ensureBinary();
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'agentshelf-binary-cache-'));
  t.teardown(() => fs.rmSync(top, { recursive: true, force: true }));
  const exe = path.join(top, 'agentshelf');
  fs.copyFileSync(built, exe);
  fs.chmodSync(exe, 0o755);
  const shared = path.join(top, 'shared'); // a cache dir anyone may write into
  fs.mkdirSync(shared);
  fs.chmodSync(shared, 0o777);
  const notADir = path.join(top, 'file'); // HOME and TMPDIR below it cannot be created
  fs.writeFileSync(notADir, '');
  const run = (env: Record<string, string>) =>
    spawnSync(exe, ['migrate'], {
      cwd: top,
      env: { PATH: path.join(top, 'no-bin'), LOG_LEVEL: 'warn', ...env },
      encoding: 'utf8',
    });

  const fellBack = run({ AGENTSHELF_CACHE_DIR: shared, HOME: path.join(top, 'home') });
  t.equal(fellBack.status, 0, fellBack.stderr);
  t.same(fs.readdirSync(shared), [], 'nothing written to the world-writable dir');
  t.match(fs.readdirSync(path.join(top, 'home', '.cache', 'agentshelf')), [/\.node$/]);

  const failed = run({
    AGENTSHELF_CACHE_DIR: shared,
    HOME: path.join(notADir, 'home'),
    TMPDIR: path.join(notADir, 'tmp'),
  });
  t.equal(failed.status, 1);
  t.match(failed.stderr, 'could not load the SQLite addon');
  t.match(failed.stderr, `${shared}: directory ${shared} is writable by group or others`);
  t.match(failed.stderr, `${path.join(notADir, 'home', '.cache', 'agentshelf')}: `);
  t.match(failed.stderr, `${path.join(notADir, 'tmp')}/agentshelf-`);
});
