import os from 'node:os';
import path from 'node:path';
import type { Config } from '../src/config.js';
import type { Db } from '../src/db/store.js';
import { feedsDirectory } from '../src/domain/feeds/files.js';
import { nginxConfigPath } from './discovery/index.js';
import { processIsGone } from '../src/runtime/process.js';
import { liveLockHolder } from './lock.js';
import { removeStaleTemporaries } from '../src/publish/fs.js';

/** Every directory a pipeline stage publishes into, where a killed run leaves temporaries. */
export function outputDirectories(config: Pick<Config, 'DATA_DIR' | 'PUBLIC_DIR'>): string[] {
  return [
    feedsDirectory(config.DATA_DIR),
    path.dirname(nginxConfigPath(config)),
    config.PUBLIC_DIR,
  ];
}

/**
 * Removes the temporaries killed runs left in every output directory, without holding the
 * pipeline lock (serve does this at start): a file goes only when the process that wrote it
 * is gone from this host, and nothing goes while a live run on another host holds the lock
 * (its pids mean nothing here). Returns how many files went.
 */
export async function sweepStaleTemporaries(
  db: Db,
  config: Pick<Config, 'DATA_DIR' | 'PUBLIC_DIR'>,
): Promise<number> {
  const holder = await liveLockHolder(db);
  if (holder && holder.hostname !== os.hostname()) return 0;
  let removed = 0;
  for (const dir of outputDirectories(config)) {
    removed += await removeStaleTemporaries(dir, { spare: (pid) => !processIsGone(pid) });
  }
  return removed;
}
