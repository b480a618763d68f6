import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { defaultStages, openPipelineContext, runPipeline } from '../../pipeline/run.js';
import type { Db } from '../../src/db/store.js';
import { productBody, type TestServer } from './server.js';

/** build/src/main.js, the CLI as users run it. */
export const CLI = fileURLToPath(new URL('../../src/main.js', import.meta.url));

/** One pipeline run in this process over the test server's store, as `build` does it. */
export async function runFeeds(s: TestServer, options: { waitMs?: number } = {}) {
  const { ctx, close } = openPipelineContext(s.server.store, {
    config: s.config,
    logger: pino({ level: 'silent' }),
    now: s.server.deps.now,
  });
  try {
    return await runPipeline(ctx, defaultStages, { trigger: 'test', waitMs: options.waitMs ?? 0 });
  } finally {
    await close();
  }
}

/** Creates a feed through the API and returns its body; fails the test on anything but 201. */
export async function createFeed(s: TestServer, body: Record<string, unknown>) {
  const res = await s.request('POST', '/v1/feeds', { body });
  if (res.status !== 201) throw new Error(`feed create: ${res.status} ${res.text}`);
  return res.body;
}

export function feedPath(s: TestServer, id: string, format: string): string {
  return path.join(s.config.DATA_DIR, 'feeds', `${id}.${format}`);
}

/** The environment a CLI child needs to use the test server's store. */
export function cliEnv(s: TestServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATA_DIR: s.dir,
    PUBLIC_DIR: s.config.PUBLIC_DIR,
    ...(s.config.DATABASE_URL ? { DATABASE_URL: s.config.DATABASE_URL } : {}),
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node build/src/main.js <args>` to its end. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Polls until `check` returns a value other than undefined/false, or fails after `ms`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 60_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Temporary files a run leaves while writing (`.<name>.tmp-<pid>-<random>`). */
export function temporaries(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((n) => n.includes('.tmp-'));
  } catch {
    return [];
  }
}

/** Every recorded pipeline run, in the order they started. */
export async function listRuns(db: Db) {
  return db
    .selectFrom('pipeline_runs')
    .select(['id', 'trigger', 'status', 'started_at', 'finished_at', 'pid'])
    .orderBy('started_at')
    .orderBy('id')
    .execute();
}

/** n products a channel takes whole (P-00, P-01, ...: a description, a brand, a page URL). */
export async function seedChannelProducts(s: TestServer, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await s.request('POST', '/v1/products', {
      body: productBody({
        id: `P-${String(i).padStart(2, '0')}`,
        description: 'Described.',
        attributes: { brand: 'Northwind', url: `https://shop.example/p/${i}` },
      }),
    });
    if (res.status !== 201) throw new Error(res.text);
  }
}
