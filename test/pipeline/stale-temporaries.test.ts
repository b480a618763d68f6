// stores: sqlite-only — a signal test (a build SIGKILLed mid-discovery) about temporary files on
//   disk, not about the store
/**
 * A build killed mid-discovery leaves temporaries (`.products.json.tmp-<pid>-...`) beside the
 * published files; the next build removes them before it writes, and serve does at start.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { brandFiles } from '../../src/domain/discovery/layout.js';
import { temporaryWriter } from '../../src/publish/fs.js';
import { MAIN, runCli, startServe } from '../support/cli.js';

/** Every temporary (by AtomicFile's naming) under a directory, as paths relative to it. */
function temporariesUnder(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .filter((rel) => temporaryWriter(path.basename(rel)) !== undefined)
    .sort();
}

/**
 * Starts `agentshelf build` and SIGKILLs it while it is writing a brand: every change in the
 * published tree wakes a check; at the first temporary the child is stopped (SIGSTOP), and
 * killed only if a temporary is still there, so the kill always lands mid-write.
 */
async function killMidDiscovery(env: NodeJS.ProcessEnv, publicDir: string): Promise<string[]> {
  fs.mkdirSync(publicDir, { recursive: true });
  const child = spawn(process.execPath, [MAIN, 'build'], { env, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  const watcher = fs.watch(publicDir, { recursive: true });
  try {
    const left = await new Promise<string[]>((resolve, reject) => {
      void exited.then(() => reject(new Error('the build ended before a temporary was seen')));
      let checking = false;
      watcher.on('change', () => {
        if (checking || temporariesUnder(publicDir).length === 0) return;
        checking = true;
        child.kill('SIGSTOP');
        const held = temporariesUnder(publicDir);
        if (held.length) {
          child.kill('SIGKILL');
          resolve(held);
        } else {
          child.kill('SIGCONT');
          checking = false;
        }
      });
    });
    t.equal(await exited, 'SIGKILL', 'the build was killed');
    return left;
  } finally {
    watcher.close();
  }
}

function assertComplete(t: Test, publicDir: string, products: number): void {
  const index = JSON.parse(fs.readFileSync(path.join(publicDir, 'v1', 'index.json'), 'utf8')) as {
    brands: { slug: string; product_count: number }[];
  };
  t.equal(index.brands.length, 8, 'the index names every brand');
  t.equal(
    index.brands.reduce((n, b) => n + b.product_count, 0),
    products,
    'the index counts every active product',
  );
  for (const b of index.brands) {
    const f = brandFiles(b.slug);
    for (const file of [f.json, f.page, f.feedJson, f.feedNdjson, `${f.feedJson}.gz`]) {
      if (!fs.existsSync(path.join(publicDir, file))) t.fail(`${file} is missing`);
    }
    const lines = fs.readFileSync(path.join(publicDir, f.feedNdjson), 'utf8').trimEnd().split('\n');
    const variants = lines.reduce(
      (n, line) => n + (JSON.parse(line) as { variants: unknown[] }).variants.length,
      0,
    );
    t.equal(variants, b.product_count, `${b.slug}: the feed carries every product`);
  }
}

t.test(
  'a build after a SIGKILLed build removes its temporaries and completes the tree',
  async (t) => {
    const dir = t.testdir({});
    const publicDir = path.join(dir, 'public');
    const dataDir = path.join(dir, 'data');
    const env = { ...process.env, DATA_DIR: dataDir, PUBLIC_DIR: publicDir, LOG_LEVEL: 'warn' };
    t.equal(runCli(['migrate'], env).status, 0);
    const seeded = runCli(['seed', '--synthetic', '12000', '--brands', '8', '--json'], env);
    t.equal(seeded.status, 0, seeded.stderr);

    const left = await killMidDiscovery(env, publicDir);
    t.ok(left.length > 0, `the killed build left temporaries: ${left.join(', ')}`);
    t.ok(
      left.some((f) => /\.products\.(nd)?json\.tmp-\d+-/.test(f)),
      'a feed file among them',
    );

    const again = runCli(['build', '--json'], env);
    t.equal(again.status, 0, again.stderr);
    t.same(temporariesUnder(publicDir), [], 'no temporary left under PUBLIC_DIR');
    t.same(temporariesUnder(dataDir), [], 'none under DATA_DIR');
    const active = (JSON.parse(again.stdout) as { stages: { summary: string[] }[] }).stages
      .flatMap((s) => s.summary)
      .join('\n');
    const count = Number(/discovery: 8 brands, (\d+) products/.exec(active)?.[1]);
    t.ok(count > 0, `the second build published every brand: ${active}`);
    assertComplete(t, publicDir, count);
  },
);

t.test('serve removes temporaries dead writers left, and spares a live writer’s', async (t) => {
  const dir = t.testdir({});
  const publicDir = path.join(dir, 'public');
  const dataDir = path.join(dir, 'data');
  const brandDir = path.join(publicDir, 'v1', 'feeds', 'acme');
  fs.mkdirSync(brandDir, { recursive: true });
  fs.mkdirSync(path.join(dataDir, 'feeds'), { recursive: true });
  // A pid no process has (above the kernel's pid_max) and a live one (this test's).
  const dead = 4_194_305;
  const stale = [
    path.join(brandDir, `.products.json.tmp-${dead}-abcdEFGH`),
    path.join(brandDir, `.products.json.tmp-${dead}-abcdEFGH.gz`),
    path.join(dataDir, 'feeds', `.feed_1.json.tmp-${dead}-12345678`),
  ];
  const live = path.join(brandDir, `.products.ndjson.tmp-${process.pid}-zzzzZZZZ`);
  const ours = path.join(brandDir, 'notes.tmp-1-x'); // not our naming: never touched
  for (const f of [...stale, live, ours]) fs.writeFileSync(f, 'x');

  const serve = await startServe({
    DATA_DIR: dataDir,
    PUBLIC_DIR: publicDir,
    FEEDS_CRON: '0 0 1 1 *',
  });
  try {
    // The start-up check logs its outcome: wait for it, then look.
    await new Promise<void>((resolve) => {
      const check = () => {
        if (/removed temporaries a killed run left/.test(serve.stdout())) resolve();
        else serve.child.stdout!.once('data', check);
      };
      check();
    });
    for (const f of stale) t.notOk(fs.existsSync(f), `${path.basename(f)} removed`);
    t.ok(fs.existsSync(live), 'the temporary of a live process stays');
    t.ok(fs.existsSync(ours), 'a file not named like ours stays');
  } finally {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
});
