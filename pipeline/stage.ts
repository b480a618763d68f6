import type { Logger } from 'pino';
import type { Config } from '../src/config.js';
import type { Db } from '../src/db/store.js';
import type { Publisher } from '../src/publish/publisher.js';

/**
 * What every pipeline stage gets. `db` is the store's main connection (writes, small reads);
 * `reader` is a second, read-only connection for streaming the catalogue: on SQLite, awaiting
 * another query on `db` inside a `reader.stream()` loop is fine, on the same connection it
 * would hang.
 */
export interface PipelineContext {
  db: Db;
  reader: Db;
  config: Config;
  logger: Logger;
  now: () => Date;
  /** Progress for a terminal: products done so far of a total, per stage. */
  progress?: (update: { stage: string; done: number; total: number }) => void;
  /**
   * A run before this one ended without cleaning up (killed), or the caller asked: stages
   * first remove the stale temporaries under their output directories.
   */
  sweepTemporaries?: boolean;
  /** Aborted when the run must stop (serve shutting down): stages stop early, publish nothing. */
  signal?: AbortSignal;
  /**
   * Where the stages publish (default: FsPublishers over DATA_DIR/feeds and PUBLIC_DIR); a
   * test gives MemoryPublishers, an object-storage target would give its own.
   */
  output?: { feeds?: Publisher; discovery?: Publisher };
}

/** One output of a stage (a feed), for `build --json` and the benchmark. */
export interface StageOutput {
  name: string;
  ok: boolean;
  products: number;
  ms: number;
  bytes: number;
  /** The published file was replaced (false: same content, kept as it was). */
  changed: boolean;
  error?: string;
}

export interface StageResult {
  stage: string;
  /** One line a person reads after `agentshelf build` (e.g. "feed_x: 60 products, 3 warnings"). */
  summary: string[];
  /** Names of the outputs that failed (the run exits non-zero when any stage reports one). */
  failures: string[];
  outputs?: StageOutput[];
}

/** A step of one pipeline run: feeds, then discovery, each publishing atomically. */
export type Stage = (ctx: PipelineContext) => Promise<StageResult>;

/** How a stage names an error in its summary lines and failures. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
