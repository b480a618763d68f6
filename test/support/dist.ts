/**
 * The one-file binary (`make dist`) for tests and benchmarks: built once, and again only when
 * something it is built from changed since.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
export const BINARY = path.join(ROOT, 'dist', 'agentshelf-linux-x64');

/** What the binary is built from: the code it bundles, its dependencies and the build script. */
const INPUTS = ['src', 'pipeline', 'scripts/dist.mjs', 'package.json', 'package-lock.json'];

function newestMtime(entry: string): number {
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of fs.readdirSync(entry))
    newest = Math.max(newest, newestMtime(path.join(entry, name)));
  return newest;
}

/** Whether dist/agentshelf-linux-x64 is missing or older than one of its inputs. */
export function binaryIsStale(): boolean {
  if (!fs.existsSync(BINARY)) return true;
  const built = fs.statSync(BINARY).mtimeMs;
  return INPUTS.some((input) => newestMtime(path.join(ROOT, input)) > built);
}

/** Builds the binary when it is stale (as `make dist` does, on Node 26); returns its path. */
export function ensureBinary(): string {
  if (!binaryIsStale()) return BINARY;
  const res = spawnSync('bash', ['scripts/node.sh', '26', 'node', 'scripts/dist.mjs'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (res.status !== 0)
    throw new Error(`building the binary failed (${res.status}):\n${res.stdout}${res.stderr}`);
  return BINARY;
}
