import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
export const MAIN = path.join(ROOT, 'build', 'src', 'main.js');

/**
 * A child's environment: this process's, then `base`, then the test's own. A test that gives
 * DATA_DIR and no PUBLIC_DIR gets PUBLIC_DIR beside it, not ./public of the checkout (a run's
 * pipeline would publish there).
 */
function childEnv(base: Record<string, string>, env: Record<string, string>): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...base, ...env };
  if (env.DATA_DIR && !env.PUBLIC_DIR) merged.PUBLIC_DIR = path.join(env.DATA_DIR, 'public');
  return merged;
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI in a child process. */
export function runCli(args: string[], env: Record<string, string> = {}): CliResult {
  const res = spawnSync(process.execPath, [MAIN, ...args], {
    env: childEnv({ LOG_LEVEL: 'warn' }, env),
    encoding: 'utf8',
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

/**
 * Runs the real CLI in a child process without blocking this process. Use it while a server in
 * this process holds keep-alive connections: runCli blocks the event loop for the child's whole
 * run, and on a busy machine a socket's idle timeout then fires just as the next request is
 * written on it (ECONNRESET).
 */
export function runCliAsync(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: childEnv({ LOG_LEVEL: 'warn' }, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** Starts `agentshelf serve` on a free port and waits for its start-up line. */
export async function startServe(env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: childEnv({ PORT: '0', FEEDS_PORT: '0', LOG_LEVEL: 'info' }, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    // A serve that did not start is not left running (nothing else would stop it).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start:\n${out}`));
    }, 90_000);
    child.stdout!.on('data', (d: string) => {
      out += d;
      const m = /serving the platform API at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => reject(new Error(`serve exited ${code}:\n${out}`)));
  });
  return { child, url, stdout: () => out, exited };
}
