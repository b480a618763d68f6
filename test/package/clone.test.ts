// stores: sqlite-only — packaging: a clean clone builds and runs the CLI on its default store; the
//   code is the same the rest of the suite runs on both stores
/**
 * A clone with nothing beside it (no ../shared, no parent checkout) has every asset it needs:
 * the committed HEAD is cloned into an empty temporary folder, built there (reusing this
 * checkout's node_modules through a symlink) and runs the CLI and the tests that read the
 * vendored ACP schema. Only what is committed counts: uncommitted files are not in the clone.
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../support/cli.js';

function run(cmd: string, args: string[], options: SpawnSyncOptions = {}) {
  const res = spawnSync(cmd, args, { encoding: 'utf8', timeout: 120_000, ...options });
  return { status: res.status, stdout: String(res.stdout), stderr: String(res.stderr) };
}

/** Source, test and benchmark files of a tree that point outside it (`../shared/...`). */
function referencesOutside(root: string): string[] {
  const hits: string[] = [];
  for (const top of ['src', 'pipeline', 'test', 'bench']) {
    const dir = path.join(root, top);
    for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
      if (!rel.endsWith('.ts') || rel === path.join('package', 'clone.test.ts')) continue;
      const text = fs.readFileSync(path.join(dir, rel), 'utf8');
      if (/\.\.\/shared\b|'\.\.',\s*'shared'/.test(text)) hits.push(`${top}/${rel}`);
    }
  }
  return hits;
}

t.test('a clone with nothing beside it builds and passes the ACP-schema tests', async (t) => {
  // Outside this checkout, so neither ../shared nor a parent node_modules is in reach.
  const alone = fs.mkdtempSync(path.join(os.tmpdir(), 'agentshelf-clone-'));
  t.teardown(() => fs.rmSync(alone, { recursive: true, force: true }));
  const repo = path.join(alone, 'agentshelf');
  const cloned = run('git', ['clone', '--quiet', ROOT, repo]);
  t.equal(cloned.status, 0, cloned.stderr);
  t.same(fs.readdirSync(alone), ['agentshelf'], 'nothing beside the clone');
  t.same(referencesOutside(repo), [], 'no source or test file points at ../shared');
  for (const asset of ['LICENSE', 'vendor/acp/schema.feed.json', 'vendor/acp/LICENSE']) {
    t.ok(fs.existsSync(path.join(repo, asset)), `${asset} is committed`);
  }

  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(repo, 'node_modules'), 'dir');
  // The CLI and the tests that read the vendored schema, not the whole tree: a full build
  // here would cost more than the rest of this test. Emitted without a type check
  // (--noCheck; tsconfig's isolatedModules lets the emitter do without one too: 9 s of CPU
  // instead of 23 s): this commit's types are checked by `make test` over the whole tree;
  // what only a clone can show is that every file the CLI and those tests import is
  // committed, and a missing one fails below when the CLI or the test loads it.
  const tsconfig = {
    extends: './tsconfig.json',
    include: [],
    files: ['src/main.ts', 'test/pipeline/discovery-publish.test.ts'],
  };
  fs.writeFileSync(path.join(repo, 'tsconfig.clone.json'), JSON.stringify(tsconfig));
  const built = run(process.execPath, [
    path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    path.join(repo, 'tsconfig.clone.json'),
    '--noCheck',
  ]);
  t.equal(built.status, 0, `tsc in the clone:\n${built.stdout}${built.stderr}`);

  const env = { ...process.env, DATA_DIR: path.join(alone, 'data'), LOG_LEVEL: 'warn' };
  const main = path.join(repo, 'build', 'src', 'main.js');
  const help = run(process.execPath, [main, '--help'], { cwd: repo, env });
  t.equal(help.status, 0, help.stderr);
  const migrated = run(process.execPath, [main, 'migrate'], { cwd: repo, env });
  t.equal(migrated.status, 0, migrated.stderr);

  const tested = run(
    'npx',
    [
      'tap',
      '--reporter=tap',
      '--disable-coverage',
      'build/test/pipeline/discovery-publish.test.js',
    ],
    { cwd: repo },
  );
  t.equal(tested.status, 0, `the ACP-schema tests in the clone:\n${tested.stdout.slice(-3000)}`);
  t.match(
    tested.stdout,
    /^ok \d+ - build\/test\/pipeline\/discovery-publish\.test\.js/m,
    'and they ran',
  );
});
