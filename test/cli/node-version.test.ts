// stores: none — the entry refuses an old Node before any store opens; its DATA_DIR only shows that no store file was made
/**
 * On a Node.js older than package.json's `engines`, every entry point says what to do and
 * exits 1 before a store opens (on Node 20, better-sqlite3's addon crashes the process with a
 * segmentation fault and no message). The machine's own node may be such a Node (this one's
 * is 20): the last tests run the built entry and the audit writer thread on it, and are
 * skipped, saying why, when no node older than the requirement is on PATH.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { usage } from '../../src/cli/usage.js';
import { NODE_MAJOR_REQUIRED, nodeVersionRefusal } from '../../src/runtime/node-version.js';
import { MAIN, ROOT } from '../support/cli.js';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
};

t.test('the required major is package.json engines.node', async (t) => {
  t.equal(pkg.engines.node, `>=${NODE_MAJOR_REQUIRED}`);
});

t.test('the refusal names the versions and what to do; supported Nodes pass', async (t) => {
  t.equal(
    nodeVersionRefusal('v20.20.2'),
    `agentshelf needs Node.js ${NODE_MAJOR_REQUIRED} or later; this is v20.20.2. Install Node.js ${NODE_MAJOR_REQUIRED}+ or, from a checkout, run \`make run\`, which fetches one (scripts/node.sh).`,
  );
  t.ok(nodeVersionRefusal(`v${NODE_MAJOR_REQUIRED - 1}.99.0`));
  t.ok(nodeVersionRefusal('v8.0.0'));
  t.ok(nodeVersionRefusal('nonsense'), 'an unreadable version is refused, not waved through');
  t.equal(nodeVersionRefusal(`v${NODE_MAJOR_REQUIRED}.0.0`), undefined);
  t.equal(nodeVersionRefusal('v26.10.0'), undefined);
  t.equal(nodeVersionRefusal(), undefined, 'the Node running the tests is supported');
});

t.test('on this (supported) Node, --version and --help answer without a warning', async (t) => {
  const version = spawnSync(process.execPath, [MAIN, '--version'], { encoding: 'utf8' });
  t.equal(version.status, 0);
  t.equal(version.stdout, `agentshelf ${pkg.version} (Node.js ${process.version})\n`);
  t.equal(version.stderr, '');
  const help = spawnSync(process.execPath, [MAIN, '--help'], { encoding: 'utf8' });
  t.equal(help.status, 0);
  t.equal(help.stdout, `${usage}\n`);
  t.equal(help.stderr, '');
});

/** The first node executable older than the requirement: on PATH, then the usual places. */
function findOldNode(): { node: string; version: string } | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/local/bin', '/usr/bin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const node = path.join(dir, 'node');
    if (!fs.existsSync(node)) continue;
    const res = spawnSync(node, ['--version'], { encoding: 'utf8' });
    const version = res.stdout?.trim();
    if (res.status === 0 && version && nodeVersionRefusal(version)) return { node, version };
  }
  return undefined;
}

const old = findOldNode();
const skip = old
  ? false
  : `no node older than ${NODE_MAJOR_REQUIRED} on PATH, /usr/local/bin or /usr/bin`;

t.test(`the CLI on an old Node (${old?.version ?? 'none found'})`, { skip }, async (t) => {
  const { node, version } = old!;
  const dir = t.testdir({});
  const env = { PATH: process.env.PATH ?? '', DATA_DIR: dir, LOG_LEVEL: 'warn' };
  const run = (args: string[]) => spawnSync(node, [MAIN, ...args], { env, encoding: 'utf8' });
  const refusal = nodeVersionRefusal(version)!;

  for (const verb of ['migrate', 'serve', 'seed', 'keys', 'store']) {
    const res = run([verb]);
    t.equal(res.status, 1, `${verb}: exit code 1 (not a signal: ${res.signal})`);
    t.equal(res.stderr, `${refusal}\n`, `${verb}: the refusal, alone, on stderr`);
    t.equal(res.stdout, '');
  }
  t.same(fs.readdirSync(dir), [], 'no store was created: nothing ran before the check');

  const versionRes = run(['--version']);
  t.equal(versionRes.status, 0);
  t.equal(versionRes.stdout, `agentshelf ${pkg.version} (Node.js ${version})\n`);
  t.equal(versionRes.stderr, `${refusal}\n`, '--version also says what the commands need');

  const help = run(['--help']);
  t.equal(help.status, 0);
  t.equal(help.stdout, `${usage}\n`);
  t.equal(help.stderr, `${refusal}\n`);
});

t.test(
  'the audit writer thread on an old Node refuses before opening its store',
  { skip },
  async (t) => {
    const { node, version } = old!;
    const dir = t.testdir({});
    const file = path.join(dir, 'audit.sqlite');
    const worker = path.join(ROOT, 'build', 'src', 'domain', 'audit', 'worker.js');
    // Started as src/domain/audit/writer.ts starts it, by a bare script that skips the entry.
    const script = `
    import { Worker } from 'node:worker_threads';
    const w = new Worker(process.argv[1], {
      execArgv: [],
      workerData: { auditWorker: true, location: { dialect: 'sqlite', file: process.argv[2] }, flushRows: 1, maxQueued: 1 },
    });
    w.on('error', (err) => { console.error(err.message); process.exitCode = 1; });
    w.on('message', (m) => console.log(JSON.stringify(m)));`;
    const res = spawnSync(node, ['--input-type=module', '-e', script, worker, file], {
      encoding: 'utf8',
    });
    t.equal(res.status, 1, `exit code 1 (signal: ${res.signal})`);
    t.equal(res.stderr, `${nodeVersionRefusal(version)}\n`);
    t.equal(res.stdout, '', 'the thread never said ready');
    t.notOk(fs.existsSync(file), 'the store was not opened');
  },
);
