// stores: sqlite-only — where settings come from (the environment, then ./.env): it checks that
//   DATA_DIR read from .env holds the SQLite file; no query differs by store
/**
 * serve and build read the same settings: the environment, then ./.env for what it lacks; a
 * FEEDS_URL other than the one the published tree was built with is reported before a run
 * rewrites every URL.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MAIN } from '../support/cli.js';

const SETTINGS = ['DATA_DIR', 'PUBLIC_DIR', 'FEEDS_URL', 'BASE_URL', 'STORE_NAME', 'PORT'];

/** This process's environment without any agentshelf setting, so only the test's count. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
  for (const name of SETTINGS) delete env[name];
  return { ...env, ...extra };
}

function cli(cwd: string, args: string[], extra: Record<string, string> = {}) {
  const res = spawnSync(process.execPath, [MAIN, ...args], {
    cwd,
    env: cleanEnv(extra),
    encoding: 'utf8',
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

function marker(dir: string): { feeds_url?: string } {
  return JSON.parse(fs.readFileSync(path.join(dir, 'public', '.published'), 'utf8')) as {
    feeds_url?: string;
  };
}

t.test('build reads ./.env; a variable set in the environment wins over the file', async (t) => {
  const dir = t.testdir({
    '.env': [
      '# settings for this folder',
      'DATA_DIR=./data',
      'PUBLIC_DIR=./public',
      'FEEDS_URL=https://file.example',
      'STORE_NAME="Store From File"',
      '',
    ].join('\n'),
  });
  t.equal(cli(dir, ['migrate']).status, 0);
  t.ok(fs.existsSync(path.join(dir, 'data', 'agentshelf.sqlite')), 'DATA_DIR came from .env');
  t.equal(cli(dir, ['seed', '--demo']).status, 0);

  const first = cli(dir, ['build']);
  t.equal(first.status, 0, first.stderr);
  t.notMatch(first.stderr, /FEEDS_URL/, 'no warning on the first build');
  t.equal(marker(dir).feeds_url, 'https://file.example', 'the tree records its FEEDS_URL');
  const home = fs.readFileSync(path.join(dir, 'public', 'index.html'), 'utf8');
  t.match(home, 'Store From File', 'STORE_NAME came from .env');
  t.match(home, 'https://file.example/v1/index.json');

  const same = cli(dir, ['build']);
  t.equal(same.status, 0, same.stderr);
  t.notMatch(same.stderr, /FEEDS_URL/, 'no warning when the URL is the same');

  const moved = cli(dir, ['build'], { FEEDS_URL: 'https://env.example' });
  t.equal(moved.status, 0, moved.stderr);
  t.match(
    moved.stderr,
    /warning: FEEDS_URL is https:\/\/env\.example but the registry in .*public was built with https:\/\/file\.example/,
    'the build says the URL changed, naming both',
  );
  t.notMatch(moved.stdout, /FEEDS_URL/, 'on stderr: stdout stays the summary');
  t.equal(marker(dir).feeds_url, 'https://env.example', 'the environment won over .env');
  t.match(
    fs.readFileSync(path.join(dir, 'public', 'index.html'), 'utf8'),
    'https://env.example/v1/index.json',
    'every URL rewritten',
  );
});

t.test('serve reads the same .env and warns when FEEDS_URL moved', async (t) => {
  const dir = t.testdir({
    '.env': 'DATA_DIR=./data\nPUBLIC_DIR=./public\nFEEDS_URL=https://file.example\n',
  });
  t.equal(cli(dir, ['migrate']).status, 0);
  t.equal(cli(dir, ['build'], { FEEDS_URL: 'https://old.example' }).status, 0);

  const child = spawn(process.execPath, [MAIN, 'serve'], {
    cwd: dir,
    env: cleanEnv({ PORT: '0', FEEDS_PORT: '0', LOG_LEVEL: 'info', FEEDS_CRON: '0 0 1 1 *' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let out = '';
  try {
    const warning = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const onData = (d: Buffer) => {
        out += d.toString();
        for (const line of out.split('\n')) {
          if (!line.includes('FEEDS_URL is')) continue;
          resolve(JSON.parse(line) as Record<string, unknown>);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((code) => reject(new Error(`serve exited ${code}:\n${out}`)));
    });
    t.match(out, `store: ${fs.realpathSync(dir)}`, 'the store is the one .env names');
    t.equal(warning.level, 40, 'logged as a warning');
    t.match(
      String(warning.msg),
      'FEEDS_URL is https://file.example but the registry in',
      'the URL from .env, against the tree',
    );
    t.match(String(warning.msg), 'was built with https://old.example');
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});
