/**
 * better-sqlite3's native addon for the one-file binary. better-sqlite3 finds its addon
 * relative to its own files in node_modules, which the binary does not have, and a Node single
 * executable application cannot load an addon from its own memory. So the binary carries the
 * addon as an asset, copies it once into a cache directory, loads it with process.dlopen and
 * hands the loaded module to better-sqlite3 (its `nativeBinding` option).
 *
 * The file is named by a hash of its bytes, so binaries of different versions never share
 * one; it is written to a temporary name and renamed, because another agentshelf process may
 * have the final name mapped (overwriting a mapped library in place crashes that process).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inBundle, inSea, seaRawAsset } from './sea.js';

/** The SEA asset and the file beside a dev-run bundle. */
export const ADDON_ASSET = 'better_sqlite3.node';

// First 16 hex digits of the addon's sha256 (scripts/dist.mjs); undeclared from source.
declare const __AGENTSHELF_ADDON_HASH__: string | undefined;

let loaded: object | undefined;

/**
 * The value for better-sqlite3's `nativeBinding` option: undefined from source (better-sqlite3
 * finds its addon in node_modules), the loaded addon in the bundle. Loads it on the first call
 * in each thread.
 */
export function sqliteNativeBinding(): object | undefined {
  if (!inBundle()) return undefined;
  loaded ??= inSea() ? loadFromAsset() : dlopen(path.join(__dirname, ADDON_ASSET));
  return loaded;
}

function dlopen(file: string): object {
  const mod = { exports: {} };
  process.dlopen(mod, file);
  return mod.exports;
}

/**
 * Where the addon may be copied, best first: AGENTSHELF_CACHE_DIR, the user's cache directory
 * (XDG_CACHE_HOME or ~/.cache), then a per-user directory in the system's temporary directory.
 */
export function addonCacheDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs: string[] = [];
  if (env.AGENTSHELF_CACHE_DIR) dirs.push(path.resolve(env.AGENTSHELF_CACHE_DIR));
  if (env.XDG_CACHE_HOME) dirs.push(path.join(path.resolve(env.XDG_CACHE_HOME), 'agentshelf'));
  else if (env.HOME) dirs.push(path.join(path.resolve(env.HOME), '.cache', 'agentshelf'));
  dirs.push(path.join(os.tmpdir(), `agentshelf-${process.getuid?.() ?? 'user'}`));
  return dirs;
}

function loadFromAsset(): object {
  const bytes = seaRawAsset(ADDON_ASSET);
  const hash = typeof __AGENTSHELF_ADDON_HASH__ === 'string' ? __AGENTSHELF_ADDON_HASH__ : 'x';
  const reasons: string[] = [];
  for (const dir of addonCacheDirs()) {
    try {
      return dlopen(placeAddon(dir, `better_sqlite3-${hash}.node`, bytes));
    } catch (err) {
      reasons.push(`${dir}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  throw new Error(
    `could not load the SQLite addon: no cache directory could hold it (set AGENTSHELF_CACHE_DIR to a writable directory on a filesystem that allows executables):\n  ${reasons.join('\n  ')}`,
  );
}

/**
 * The path of `name` in `dir` holding exactly `bytes`: the file already there, else written
 * now. The directory and a file found in it must belong to this user (or root) and be writable
 * by nobody else, so no other user can put code there for this process to load.
 */
function placeAddon(dir: string, name: string, bytes: Uint8Array): string {
  const file = path.join(dir, name);
  const existing = statOrUndefined(file);
  if (existing) {
    checkOwned(dir, fs.statSync(dir), 'directory');
    checkOwned(file, existing, 'file');
    if (existing.size === bytes.length && Buffer.compare(fs.readFileSync(file), bytes) === 0)
      return file;
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  checkOwned(dir, fs.statSync(dir), 'directory');
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(tmp, bytes, { mode: 0o755 });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return file;
}

function statOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}

function checkOwned(file: string, stat: fs.Stats, what: string): void {
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid && stat.uid !== 0)
    throw new Error(`${what} ${file} belongs to another user (uid ${stat.uid})`);
  if ((stat.mode & 0o022) !== 0)
    throw new Error(
      `${what} ${file} is writable by group or others (mode ${(stat.mode & 0o777).toString(8)})`,
    );
}
