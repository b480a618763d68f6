import type { Logger } from 'pino';
import type { Config } from '../src/config.js';
import type { Db } from '../src/db/database.js';

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
}

export interface StageResult {
  stage: string;
  /** One line a person reads after `agentshelf build` (e.g. "feed_x: 60 products, 3 warnings"). */
  summary: string[];
  /** Names of the outputs that failed (the run exits non-zero when any stage reports one). */
  failures: string[];
}

/** A step of one pipeline run: feeds, then discovery, each publishing atomically. */
export type Stage = (ctx: PipelineContext) => Promise<StageResult>;
