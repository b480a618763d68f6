// stores: sqlite-only — packaging: the npm-installed bin runs on its default store; the code is the
//   same the rest of the suite runs on both stores
/**
 * The package installs: `npm pack` of this repository, installed into an empty folder, gives
 * a working `agentshelf` bin. The install is offline: the tarball's dependencies are copied
 * from this repository's node_modules (the production ones only, as `npm ls --omit=dev`
 * lists them), so npm finds every dependency satisfied and fetches nothing. That works in CI
 * right after `npm ci` and on a machine with no network or npm cache.
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../support/cli.js';

function run(cmd: string, args: string[], options: SpawnSyncOptions = {}) {
  const res = spawnSync(cmd, args, { encoding: 'utf8', timeout: 120_000, ...options });
  return { status: res.status, stdout: String(res.stdout), stderr: String(res.stderr) };
}

/** Copies the production dependency tree of the repository into `dir/node_modules`. */
function copyProductionDependencies(dir: string): number {
  const listed = run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT });
  const rootModules = path.join(ROOT, 'node_modules') + path.sep;
  // Each listed path is a package folder; copying a top-level one brings its nested ones.
  const tops = listed.stdout
    .split('\n')
    .filter((p) => p.startsWith(rootModules))
    .map((p) => p.slice(rootModules.length))
    .filter((rel) => !rel.includes(`${path.sep}node_modules${path.sep}`));
  for (const rel of tops) {
    fs.cpSync(path.join(rootModules, rel), path.join(dir, 'node_modules', rel), {
      recursive: true,
      verbatimSymlinks: true,
    });
  }
  return tops.length;
}

t.test(
  'npm pack, then npm install of the tarball in an empty folder, gives a working bin',
  async (t) => {
    const dir = t.testdir({});
    // The build this test runs from is the one packed: prepare (tsc) need not run again.
    const packed = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: ROOT,
    });
    t.equal(packed.status, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    const files = info!.files.map((f) => f.path);
    for (const needed of [
      'build/src/main.js',
      'build/src/domain/audit/worker.js',
      'build/src/db/migrations/index.js',
      'build/pipeline/run.js',
      'package.json',
      'LICENSE',
      'README.md',
      'docs/openapi.json',
      'vendor/acp/schema.feed.json',
      'vendor/acp/LICENSE',
      'vendor/acp/NOTICE',
    ]) {
      t.ok(files.includes(needed), `the tarball carries ${needed}`);
    }
    for (const f of files) {
      if (/^(build\/test|build\/bench|test|bench|src|pipeline)\/|\.map$|tsbuildinfo/.test(f)) {
        t.fail(`the tarball carries ${f}, which the runtime never reads`);
      }
    }

    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    fs.writeFileSync(
      path.join(home, 'package.json'),
      `${JSON.stringify({ name: 'empty', private: true })}\n`,
    );
    t.ok(copyProductionDependencies(home) > 0, 'production dependencies copied');
    const tarball = path.join(dir, info!.filename);
    const installed = run(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball],
      { cwd: home },
    );
    t.equal(installed.status, 0, `npm install of the tarball:\n${installed.stderr}`);
    t.ok(
      fs.existsSync(path.join(home, 'node_modules', '.bin', 'agentshelf')),
      'node_modules/.bin/agentshelf exists',
    );

    const env = { ...process.env, DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn' };
    const help = run('npx', ['--no', '--', 'agentshelf', '--help'], { cwd: home, env });
    t.equal(help.status, 0, help.stderr);
    t.match(help.stdout, /^agentshelf 0\.1\.0: /, 'the installed bin prints its usage');
    t.match(help.stdout, /\n {2}serve\s/);

    const migrated = run('npx', ['--no', '--', 'agentshelf', 'migrate'], { cwd: home, env });
    t.equal(migrated.status, 0, migrated.stderr);
    t.ok(
      fs.statSync(path.join(dir, 'data', 'agentshelf.sqlite')).size > 0,
      'migrate created the store in DATA_DIR',
    );
    const again = run('npx', ['--no', '--', 'agentshelf', 'migrate'], { cwd: home, env });
    t.equal(again.status, 0, 'a second migrate finds nothing to do');
  },
);
