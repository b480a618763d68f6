import path from 'node:path';
import { loadConfig } from '../config.js';
import { copyStore, CopyMismatchError, CopyRowError, TargetNotEmptyError } from '../db/copy.js';
import {
  describeLocation,
  openStore,
  openStoreAt,
  storeLocation,
  type StoreLocation,
} from '../db/store.js';
import { intFlag, parseVerbArgs, UsageError } from './args.js';
import { createProgress, formatDuration } from './progress.js';

export const storeHelp = `Usage: agentshelf store copy --to postgres://USER:PASSWORD@HOST:PORT/DB [--force] [--json]
       agentshelf store copy --to sqlite:PATH [--force] [--json]

Copies every table of the configured store (DATABASE_URL, or the SQLite file under
DATA_DIR) to another store: how a merchant moves from SQLite to PostgreSQL, and back.
The store may be live: the copy reads one snapshot of it while serve goes on.

  --to URL        the target: a PostgreSQL URL, or sqlite: and a file path
  --force         empty a target that already holds data (refused otherwise)
  --batch N       rows read and written at a time (default 2000)
  --json          one JSON object at the end instead of lines

Both stores are migrated to the latest schema first. The target is written in one
transaction: a copy that fails, or whose row counts per table do not match the source's at
the end, leaves the target as it was and exits non-zero. Point DATABASE_URL (or DATA_DIR)
at the target and start serve to use it.`;

/** The target of --to, or a UsageError naming the flag. */
export function parseStoreTarget(to: string): StoreLocation {
  if (/^postgres(ql)?:\/\//i.test(to)) {
    return { dialect: 'postgres', url: to };
  }
  if (to.startsWith('sqlite:')) {
    const file = to.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!file) throw new UsageError('--to sqlite: needs a file path, as in sqlite:./moved.sqlite');
    return { dialect: 'sqlite', file: path.resolve(file) };
  }
  throw new UsageError(`--to must be a postgres:// URL or sqlite:PATH, got '${redactUrl(to)}'`);
}

/** A URL fit for output: never its password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

function describe(location: StoreLocation): string {
  return describeLocation(location);
}

function sameStore(a: StoreLocation, b: StoreLocation): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export async function runStore(argv: string[]): Promise<number> {
  const { values, positionals } = parseVerbArgs(argv, {
    to: { type: 'string' },
    force: { type: 'boolean' },
    batch: { type: 'string' },
  });
  if (values.help) {
    console.log(storeHelp);
    return 0;
  }
  const [action, ...extra] = positionals;
  if (action !== 'copy') {
    throw new UsageError(action ? `unknown action '${action}'` : 'give an action: copy');
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  if (!values.to) throw new UsageError('--to is required');
  const target = parseStoreTarget(values.to);
  const batchRows = intFlag(values.batch, 'batch', 1);
  const config = loadConfig();
  const sourceLocation = storeLocation(config);
  if (sameStore(sourceLocation, target)) {
    throw new UsageError('--to names the configured store itself; give another store');
  }
  const json = values.json === true;
  const tty = !json && process.stderr.isTTY === true;
  const progress = tty ? createProgress(process.stderr, 'rows') : undefined;
  const started = performance.now();
  const source = openStore(config);
  let to;
  try {
    to = openStoreAt(target);
  } catch (err) {
    await source.close();
    throw err;
  }
  const from = describe(sourceLocation);
  const into = describe(target);
  if (!json) console.log(`copying ${from} to ${into}`);
  try {
    const result = await copyStore(source, to, {
      ...(values.force ? { force: true } : {}),
      ...(batchRows ? { batchRows } : {}),
      onProgress: (p) => progress?.update({ stage: p.table, done: p.done, total: p.total }),
      onTable: (table, rows) => {
        if (!json && !tty) console.log(`${table}: ${rows.toLocaleString('en')} rows`);
      },
    });
    progress?.clear();
    const seconds = (performance.now() - started) / 1000;
    if (json) {
      console.log(
        JSON.stringify({
          source: from,
          target: into,
          ok: true,
          rows: result.rows,
          seconds,
          tables: result.tables,
        }),
      );
    } else {
      console.log(
        `copied ${result.rows.toLocaleString('en')} rows of ${result.tables.length} tables in ${formatDuration(seconds * 1000)}; row counts match`,
      );
    }
    return 0;
  } catch (err) {
    progress?.clear();
    if (
      err instanceof TargetNotEmptyError ||
      err instanceof CopyMismatchError ||
      err instanceof CopyRowError
    ) {
      if (json) {
        console.log(
          JSON.stringify({
            source: from,
            target: into,
            ok: false,
            error: err.message,
            ...(err instanceof CopyMismatchError ? { tables: err.tables } : {}),
            ...(err instanceof CopyRowError ? { table: err.table, row: err.rowKey } : {}),
          }),
        );
      } else console.error(`agentshelf store copy: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await to.close();
    await source.close();
  }
}
