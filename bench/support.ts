/**
 * Shared pieces of the benchmarks: a scratch directory, the CLI and servers as child processes,
 * load generation with wrk (or autocannon when wrk is missing), peak RSS, medians and ratios.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MAIN = path.join(ROOT, 'build', 'src', 'main.js');

/** A fresh directory under bench/.work/ (git-ignored). */
export function scratchDir(name: string, options: { keep?: boolean } = {}): string {
  const dir = path.join(ROOT, 'bench', '.work', name);
  if (!options.keep) fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Runs the agentshelf CLI to completion; throws with its stderr on failure. Returns stdout. */
export function runCli(args: string[], env: Record<string, string>): string {
  const res = spawnSync(process.execPath, [MAIN, ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  });
  if (res.status !== 0) throw new Error(`agentshelf ${args.join(' ')} exited ${res.status}`);
  return res.stdout;
}

export interface Child {
  process: ChildProcess;
  pid: number;
  /** Peak resident set size so far, in MB (VmHWM). */
  peakRssMb(): number;
  stop(): Promise<void>;
}

/** Peak RSS of a live process in MB, from /proc/<pid>/status. */
/** An API key whose limits no benchmark loop reaches (no 429 in the figures), made by the CLI. */
export function unlimitedKey(
  env: Record<string, string>,
  level: 'admin' | 'read_write' | 'read_only',
  name: string,
): string {
  return runCli(
    [
      'keys',
      'create',
      '--level',
      level,
      '--plan',
      'scale',
      '--rpm',
      '10000000',
      '--burst',
      '20000000',
      '--name',
      name,
    ],
    env,
  ).trim();
}

export function peakRssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** Starts a child and resolves once a line of its stdout matches `ready`. */
export async function startChild(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; ready: RegExp; timeoutMs?: number },
): Promise<Child & { match: RegExpMatchArray; output: () => string }> {
  const child = spawn(command, args, {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `${command} ${args.join(' ')}: not ready after ${options.timeoutMs ?? 30000} ms:\n${output}`,
          ),
        ),
      options.timeoutMs ?? 30_000,
    );
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      output += chunk;
      const m = output.match(options.ready);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited ${code} before it was ready:\n${output}`));
    });
  });
  child.stdout!.resume();
  return {
    process: child,
    pid: child.pid!,
    match,
    output: () => output,
    peakRssMb: () => peakRssMb(child.pid!),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** `agentshelf serve` on a free port over DATA_DIR, logging only warnings. */
export async function startAgentshelf(env: Record<string, string>) {
  return startChild(process.execPath, [MAIN, 'serve'], {
    env: { PORT: '0', FEEDS_PORT: '0', LOG_LEVEL: 'warn', ...env },
    ready: /serving the platform API at (http:\/\/\S+)/,
    timeoutMs: 120_000,
  });
}

export interface LoadResult {
  tool: 'wrk' | 'autocannon';
  rps: number;
  /** Requests answered in the run (wrk's "N requests in", autocannon's total). */
  served: number;
  p99ms: number;
  errors: number;
  /**
   * CPU time (user + system) the server spent per request, in microseconds, when `load` was
   * given its pid: the figure other processes on a shared machine disturb least.
   */
  cpuUs?: number;
}

const CLK_TCK =
  Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** The fields of /proc/<pid>/stat after "pid (comm) ": [0] is field 3 (state). */
function statFieldsOf(pid: number): string[] {
  return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
}

/**
 * CPU seconds a process has used so far (user + system), from /proc/<pid>/stat; with
 * `reaped`, also those of its children it has waited for (a server's ended workers).
 */
export function cpuSecondsOf(pid: number, options: { reaped?: boolean } = {}): number {
  // utime is field 14, stime 15, cutime 16, cstime 17.
  const fields = statFieldsOf(pid);
  let ticks = Number(fields[11]) + Number(fields[12]);
  if (options.reaped) ticks += Number(fields[13]) + Number(fields[14]);
  return ticks / CLK_TCK;
}

/** A process's parent's pid (field 4 of /proc/<pid>/stat). */
export function parentPidOf(pid: number): number {
  return Number(statFieldsOf(pid)[1]);
}

/**
 * CPU seconds a PostgreSQL cluster (data in `<clusterDir>/data`) has used so far: its
 * postmaster and every child, ended ones included (the backends of closed connections).
 */
export function pgClusterCpuSeconds(clusterDir: string): number {
  const pidFile = path.join(clusterDir, 'data', 'postmaster.pid');
  const postmaster = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  let seconds = cpuSecondsOf(postmaster, { reaped: true });
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const pid = Number(entry);
      if (parentPidOf(pid) === postmaster) seconds += cpuSecondsOf(pid, { reaped: true });
    } catch {
      // a process that ended meanwhile
    }
  }
  return seconds;
}

/** The machine's CPU ticks so far (all cores, from /proc/stat): idle and in all. */
export function machineTicks(): { idle: number; total: number } {
  const [, ...ticks] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = ticks.map(Number);
  return { idle: n[3]! + (n[4] ?? 0), total: n.reduce((a, b) => a + b, 0) };
}

/** The busy share of the machine's CPU time between two readings of machineTicks. */
export function busyShareBetween(
  a: { idle: number; total: number },
  b: { idle: number; total: number },
): number {
  return b.total === a.total ? 0 : 1 - (b.idle - a.idle) / (b.total - a.total);
}

/** The machine's busy share of CPU time over `ms` (all cores, from /proc/stat). */
async function busyShare(ms: number): Promise<number> {
  const a = machineTicks();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return busyShareBetween(a, machineTicks());
}

/**
 * Waits until the machine is idle again (under a fifth busy for two half-seconds in a row,
 * at most `maxMs`): the work a load left queued (requests the server still answers, queries
 * the database still runs after their clients went) must not be measured in the next load.
 * Resolves with the milliseconds waited.
 */
export async function waitIdle(maxMs = 60_000): Promise<number> {
  const started = performance.now();
  let quiet = 0;
  while (quiet < 2 && performance.now() - started < maxMs) {
    quiet = (await busyShare(500)) < 0.2 ? quiet + 1 : 0;
  }
  return Math.round(performance.now() - started);
}

export function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** Requests for random ids: `${prefix}${n zero-padded to digits}`, n in [0, count). */
export interface RandomIds {
  prefix: string;
  digits: number;
  count: number;
}

export interface LoadOptions {
  url: string;
  connections: number;
  seconds: number;
  headers?: Record<string, string>;
  /** Instead of the URL's path, each request asks for a random id. */
  randomIds?: RandomIds;
  /** The server's pid, to measure its CPU time per request. */
  pid?: number;
}

/**
 * Drives load at a URL for `seconds` with `connections`, with wrk, or with autocannon when
 * wrk is missing or BENCH_LOAD=autocannon. autocannon uses about a core of its own, which
 * caps what it can measure of fast servers on this 2-core machine; wrk uses less.
 */
export async function load(options: LoadOptions): Promise<LoadResult> {
  if (options.pid === undefined) return generateLoad(options);
  const before = cpuSecondsOf(options.pid);
  const result = await generateLoad(options);
  const requests = result.rps * options.seconds;
  return { ...result, cpuUs: ((cpuSecondsOf(options.pid) - before) * 1e6) / requests };
}

async function generateLoad(options: LoadOptions): Promise<LoadResult> {
  const ids = options.randomIds;
  if (process.env.BENCH_LOAD !== 'autocannon' && hasCommand('wrk')) {
    const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency'];
    let script: string | undefined;
    if (ids || options.headers) {
      script = path.join(
        scratchDir('wrk-scripts', { keep: true }),
        `s${process.pid}-${Date.now()}.lua`,
      );
      const headerLines = Object.entries(options.headers ?? {})
        .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
        .join('\n');
      const request = ids
        ? `request = function()
  return wrk.format("GET", string.format("${ids.prefix}%0${ids.digits}d", math.random(0, ${ids.count - 1})))
end`
        : '';
      fs.writeFileSync(script, `${headerLines}\n${request}\n`);
      args.push('-s', script);
    }
    args.push(options.url);
    const res = spawnSync('wrk', args, { encoding: 'utf8' });
    if (script) fs.rmSync(script, { force: true });
    if (res.status !== 0) throw new Error(`wrk failed: ${res.stderr}`);
    const out = res.stdout;
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
    const p99 = /\s99%\s+([\d.]+)(us|ms|s)\b/.exec(out);
    const p99ms = p99
      ? Number(p99[1]) * (p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1)
      : NaN;
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
    const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const errors = non2xx + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
    const served = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
    return { tool: 'wrk', rps, served, p99ms, errors };
  }
  const { default: autocannon } = await import('autocannon');
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(ids
      ? {
          requests: [
            {
              setupRequest: (request: Record<string, unknown>) => ({
                ...request,
                path: `${ids.prefix}${String(Math.floor(Math.random() * ids.count)).padStart(ids.digits, '0')}`,
              }),
            },
          ],
        }
      : {}),
  });
  return {
    tool: 'autocannon',
    rps: result.requests.average,
    served: result.requests.total,
    p99ms: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** Prints a Markdown table. */
export function table(headers: string[], rows: (string | number)[][]): void {
  console.log(`| ${headers.join(' | ')} |`);
  console.log(`|${headers.map(() => '---').join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

/** "PASS" or "MISS" against a target, for the figures a benchmark prints. */
export function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}
