/**
 * Runs the tap suite, on one or more Node runtimes, and ends with the line CI reads:
 * `N passed, M failed`.
 *
 *   node build/test/support/run-tests.js [--node=RUNTIME[+NAME=VALUE]...[:FILES]]... [tap args]
 *
 * Each --node runs the suite through scripts/node.sh RUNTIME (24, 26, default or system),
 * one runtime after the other; FILES, comma-separated test/**.test.ts or build/test/**.test.js
 * paths, narrows that runtime to those files; each +NAME=VALUE is set in that pass's
 * environment (`--node=26+AGENTSHELF_TEST_STORE=postgres:FILES`: those files on PostgreSQL).
 * FILES `@store-bound` names every store-bound test file (test/support/stores.ts: the files
 * whose imports reach test/support/store.ts, less those that opt out with a reason): the
 * PostgreSQL pass of `make test` is
 * `--node=24+AGENTSHELF_TEST_STORE=postgres+TAP_JOBS=2:@store-bound`.
 * Without --node the suite runs once on this node. `--coverage` gives the first run tap's
 * coverage report (`make coverage`); without it every run skips tap's instrumentation, which
 * cost `make test` a quarter of its CPU time (a pair of files: 47.5 s of CPU with it, 34.0 s
 * without). Test processes and the CLI children they start share one compile cache
 * (NODE_COMPILE_CACHE under build/, emptied with it), and load Kysely and zod from one-file
 * bundles of themselves that this writes first (bundled-deps.ts: a quarter of the CPU time).
 * Each runtime ends with `Node RUNTIME: N passed, M failed`, and the last line is the total.
 * `--together` starts every --node run at once instead of one after the other (`make test`: a
 * pass waiting on its servers and children leaves the cores to the other); the first run's
 * output streams, each other run's is printed whole when the first has ended.
 *
 * N and M count the named tests (each t.test of a file). A file that fails while none of its
 * named tests did (a crash at exit, a signal, a timeout, an error outside any test) counts as
 * one failure, and so does a tap run that exits non-zero with no failure seen.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUNDLED_DEPS } from './bundled-deps.js';
import { storeBoundFiles } from './stores.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const NODE_SH = path.join(ROOT, 'scripts', 'node.sh');
const COMPILE_CACHE = path.join(ROOT, 'build', '.compile-cache');
const BUNDLED_DEPS_DIR = path.join(ROOT, 'build', '.bundled-deps');

/**
 * Files whose process V8 kills under tap's coverage on Node 26.10 ('Fatal error ... Check failed:
 * new_capacity > 0', with @tapjs/processinfo loaded and NODE_V8_COVERAGE set; the same file
 * passes without coverage, and on Node 24): the lint tests, which run ESLint and the TypeScript
 * parser in the test's process. With --coverage on Node 26 they run in a tap run of their own
 * with --disable-coverage; every other file of the first --node keeps coverage. Later --node
 * runs (other runtimes, other stores) run without it: the first run's report covers them.
 */
const COVERAGE_CRASHES_ON_26 = (file: string) => file.startsWith('build/test/lint/');

interface Run {
  /** A scripts/node.sh RUNTIME, or undefined for the node running this script. */
  runtime: string | undefined;
  /** Test files (build/test/**.test.js); empty for the whole suite. */
  files: string[];
  /** Set in the environment of this pass's tap run. */
  env: Record<string, string>;
  /** Given to this pass's tap run before the command line's own. */
  tapArgs?: string[];
}

/** Where a run's lines go: this process's stdout, or a buffer printed later. */
type Print = (line: string) => void;

interface Tally {
  passed: number;
  failed: number;
  failures: string[];
}

/** test/x/y.test.ts and build/test/x/y.test.js both name build/test/x/y.test.js. */
function builtTestFile(file: string): string {
  const m = /^(?:\.\/)?(?:build\/)?(test\/.+\.test)\.(?:ts|js)$/.exec(file.trim());
  if (!m) throw new Error(`--node: '${file}' is not a test/**.test.ts file`);
  return `build/${m[1]}.js`;
}

interface Args {
  runs: Run[];
  tapArgs: string[];
  coverage: boolean;
  together: boolean;
}

function parseArgs(argv: string[]): Args {
  const runs: Run[] = [];
  const tapArgs: string[] = [];
  let coverage = false;
  let together = false;
  for (const arg of argv) {
    if (arg === '--coverage' || arg === '--together') {
      if (arg === '--coverage') coverage = true;
      else together = true;
      continue;
    }
    const m = /^--node=([^:]+)(?::(.*))?$/.exec(arg);
    if (!m) {
      tapArgs.push(arg);
      continue;
    }
    const files =
      m[2] === undefined
        ? []
        : m[2]
            .split(',')
            .filter(Boolean)
            .flatMap((f) => (f === '@store-bound' ? storeBoundFiles(ROOT) : [f]))
            .map(builtTestFile);
    if (m[2] !== undefined && files.length === 0)
      throw new Error(`--node=${m[1]}: the file list after ':' is empty`);
    const [runtime, ...assignments] = m[1]!.split('+');
    const env: Record<string, string> = {};
    for (const a of assignments) {
      const kv = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(a);
      if (!kv) throw new Error(`--node=${m[1]}: '${a}' is not NAME=VALUE`);
      env[kv[1]!] = kv[2]!;
    }
    runs.push({ runtime, files, env });
  }
  if (runs.length === 0) runs.push({ runtime: undefined, files: [], env: {} });
  if (coverage && together) throw new Error('--coverage runs the passes one after the other');
  return { runs, tapArgs, coverage, together };
}

function allTestFiles(): string[] {
  return readdirSync(path.join(ROOT, 'build', 'test'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.js'))
    .map((f) => `build/test/${f}`)
    .sort();
}

function nodeMajor(runtime: string | undefined): number {
  const version = runtime
    ? execFileSync(NODE_SH, [runtime, 'node', '-p', 'process.versions.node'], { cwd: ROOT })
        .toString()
        .trim()
    : process.versions.node;
  return Number(version.split('.')[0]);
}

/**
 * Runs a runtime's files: without coverage at once; with it, those that crash under coverage
 * there in a run of their own.
 */
async function runRuntime(
  run: Run,
  tapArgs: string[],
  coverage: boolean,
  print: Print,
): Promise<Tally> {
  if (!coverage) return runTap(run, ['--disable-coverage', ...tapArgs], print);
  if (nodeMajor(run.runtime) !== 26) return runTap(run, tapArgs, print);
  const files = run.files.length ? run.files : allTestFiles();
  const apart = files.filter(COVERAGE_CRASHES_ON_26);
  if (!apart.length) return runTap(run, tapArgs, print);
  const covered = files.filter((f) => !apart.includes(f));
  const tally = covered.length
    ? await runTap({ ...run, files: covered }, tapArgs, print)
    : { passed: 0, failed: 0, failures: [] };
  const rest = await runTap({ ...run, files: apart }, ['--disable-coverage', ...tapArgs], print);
  return {
    passed: tally.passed + rest.passed,
    failed: tally.failed + rest.failed,
    failures: [...tally.failures, ...rest.failures],
  };
}

/**
 * Runs tap once and counts its results from the TAP stream it prints. Without coverage
 * (`--disable-coverage`) tap's process recorder still loads into every test process and, through
 * NODE_OPTIONS, every process a test starts, and there reads and measures each module it loads
 * for a coverage report nobody asked for: 1.2 s of CPU in a test of 1.9 s.
 * Its exclusion pattern set to every file (`_TAPJS_PROCESSINFO_EXCLUDE_`) skips that work.
 */
function runTap(run: Run, tapArgs: string[], print: Print): Promise<Tally> {
  const covered = !tapArgs.includes('--disable-coverage');
  const tap = ['npx', 'tap', '--reporter=tap', ...(run.tapArgs ?? []), ...tapArgs, ...run.files];
  const [command, ...args] = run.runtime ? [NODE_SH, run.runtime, ...tap] : tap;
  const hook = pathToFileURL(path.join(import.meta.dirname, 'bundled-deps.js')).href;
  const child = spawn(command!, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      NODE_COMPILE_CACHE: COMPILE_CACHE,
      ...(covered ? {} : { _TAPJS_PROCESSINFO_EXCLUDE_: '/./' }),
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${hook}`.trim(),
      ...run.env,
    },
  });
  const tally: Tally = { passed: 0, failed: 0, failures: [] };
  let file = '';
  let fileFailed = 0;
  let buffer = '';

  function onLine(line: string): void {
    print(line);
    // Top-level lines are files; lines indented by 4 spaces are the tests inside them.
    const subtest = /^# Subtest: (.*)$/.exec(line);
    if (subtest) {
      file = subtest[1]!;
      fileFailed = 0;
      return;
    }
    const inner = /^ {4}(not ok|ok) \d+ - (.*?)(\s+#\s*(SKIP|TODO).*)?$/.exec(line);
    if (inner) {
      if (inner[3]) return;
      if (inner[1] === 'ok') tally.passed++;
      else {
        tally.failed++;
        fileFailed++;
        tally.failures.push(`${file}: ${inner[2]!}`);
      }
      return;
    }
    const top = /^(not ok|ok) \d+ - (.*?)(\s+#.*)?$/.exec(line);
    if (top) {
      if (top[1] === 'not ok' && fileFailed === 0) {
        tally.failed++;
        tally.failures.push(
          `${top[2]!}: the file failed outside its tests (crash, signal or timeout)`,
        );
      }
      file = '';
      fileFailed = 0;
    }
  }

  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let i: number;
    while ((i = buffer.indexOf('\n')) >= 0) {
      onLine(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
    }
  });
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      if (buffer) onLine(buffer);
      if ((code !== 0 || signal) && tally.failed === 0) {
        tally.failed = 1;
        tally.failures.push(`tap exited with ${signal ?? `code ${code}`} and no failed test`);
      }
      resolve(tally);
    });
  });
}

/**
 * A PostgreSQL pass's cluster: started with the migrated template before the pass and shared by
 * its test processes (test/support/store.ts), each test with databases of its own; a process
 * of its own per file cost a cluster's copy, start and stop, 2 s of CPU a file.
 */
async function withPgCluster(run: Run, print: Print): Promise<{ run: Run; done: () => void }> {
  if (run.env.AGENTSHELF_TEST_STORE !== 'postgres' || run.env.AGENTSHELF_TEST_PG_CLUSTER)
    return { run, done: () => {} };
  const started = Date.now();
  const { startSharedPgCluster } = await import('./store.js');
  const { shared, destroy } = await startSharedPgCluster();
  print(`# PostgreSQL cluster (initdb, migrated template) in ${Date.now() - started} ms`);
  return {
    run: { ...run, env: { ...run.env, AGENTSHELF_TEST_PG_CLUSTER: JSON.stringify(shared) } },
    done: destroy,
  };
}

/** One --node run from start to summary; resolves its tally and its summary line. */
async function runPass(
  given: Run,
  first: boolean,
  print: Print,
): Promise<{ tally: Tally; summary: string | undefined }> {
  const started = Date.now();
  const { run, done } = await withPgCluster(given, print);
  // The coverage report (--coverage) is the first run's (the whole suite); the later runs
  // (other runtimes, other stores) repeat files it already covered.
  const tally = await runRuntime(run, tapArgs, coverage && first, print);
  done();
  const seconds = Math.round((Date.now() - started) / 1000);
  const scope = run.files.length ? `${run.files.length} files` : 'the whole suite';
  if (tally.failures.length)
    print(`\nfailed:\n${tally.failures.map((f) => `  - ${f}`).join('\n')}`);
  if (!run.runtime) return { tally, summary: undefined };
  const settings = Object.entries(given.env)
    .filter(([k]) => !k.startsWith('_TAPJS_'))
    .map(([k, v]) => `${k}=${v}`);
  const label = `Node ${run.runtime}${settings.length ? ` (${settings.join(' ')})` : ''}`;
  const summary = `${label}: ${tally.passed} passed, ${tally.failed} failed`;
  print(`\n${summary}`);
  return { tally, summary: `${summary} (${scope} in ${seconds} s)` };
}

/**
 * A run that shares the checkout with others at once: tap names a test's t.testdir() after the
 * file, the test and the test's arguments, so one argument of its own keeps two passes of the
 * same file out of each other's directories; and tap's process records go to a directory of its
 * own, as each tap run empties .tap/processinfo when it starts.
 */
function apart(run: Run, i: number): Run {
  const pass = `pass${i + 1}`;
  return {
    ...run,
    tapArgs: [`--test-arg=${pass}`],
    env: { ...run.env, _TAPJS_PROCESSINFO_CWD_: path.join(ROOT, 'build', `.tap-${pass}`) },
  };
}

/**
 * Writes the one-file bundles of bundled-deps.ts's packages into build/.bundled-deps, from
 * node_modules (Kysely's entry and its migration entry share one chunk, so their classes are
 * one).
 */
async function bundleDeps(): Promise<void> {
  rmSync(BUNDLED_DEPS_DIR, { recursive: true, force: true });
  const entries = path.join(BUNDLED_DEPS_DIR, 'entries');
  mkdirSync(entries, { recursive: true });
  const entryPoints = Object.entries(BUNDLED_DEPS).map(([spec, file]) => {
    const entry = path.join(entries, file);
    const reexport = `export * from '${spec}';\n`;
    writeFileSync(entry, spec === 'zod' ? `${reexport}export { default } from 'zod';\n` : reexport);
    return entry;
  });
  await build({
    entryPoints,
    outdir: BUNDLED_DEPS_DIR,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    nodePaths: [path.join(ROOT, 'node_modules')],
    logLevel: 'warning',
  });
}

const stdout: Print = (line) => process.stdout.write(`${line}\n`);
const { runs, tapArgs, coverage, together } = parseArgs(process.argv.slice(2));
await bundleDeps();
const results: { tally: Tally; summary: string | undefined }[] = [];
if (together) {
  const buffers: string[][] = runs.map(() => []);
  const passes = runs.map((run, i) =>
    runPass(apart(run, i), i === 0, i === 0 ? stdout : (line) => buffers[i]!.push(line)),
  );
  for (const [i, pass] of passes.entries()) {
    results.push(await pass);
    for (const line of buffers[i]!) stdout(line);
  }
} else {
  for (const [i, run] of runs.entries()) results.push(await runPass(run, i === 0, stdout));
}
const summaries = results.flatMap((r) => (r.summary ? [r.summary] : []));
const passed = results.reduce((n, r) => n + r.tally.passed, 0);
const failed = results.reduce((n, r) => n + r.tally.failed, 0);
if (summaries.length > 1) console.log(`\n${summaries.join('\n')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
