import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ReportFormat } from '../../db/schema.js';

/**
 * Where report files live: DATA_DIR/reports/<report_id>.<format>. Outside PUBLIC_DIR: a
 * report is reached only through the authenticated download endpoint.
 */
export function reportsDirectory(dataDir: string): string {
  return path.join(dataDir, 'reports');
}

export function reportFilePath(dataDir: string, id: string, format: ReportFormat): string {
  return path.join(reportsDirectory(dataDir), `${id}.${format}`);
}

export const REPORT_CONTENT_TYPES: Record<ReportFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  json: 'application/json; charset=utf-8',
  html: 'text/html; charset=utf-8',
};

/** Temporaries start with this; the worker removes those a killed process left behind. */
export const TEMPORARY_PREFIX = '.tmp-';

/**
 * A report file being written: text goes to a temporary beside the final name (with
 * backpressure), and `commit()` flushes it to disk and renames it into place, so the final
 * name only ever holds a whole file. `abort()` removes the temporary.
 */
export class ReportFileWriter {
  readonly temporary: string;
  private readonly stream: fs.WriteStream;
  private bytes = 0;
  private failure: Error | undefined;

  constructor(readonly target: string) {
    this.temporary = path.join(
      path.dirname(target),
      `${TEMPORARY_PREFIX}${path.basename(target)}.${randomBytes(6).toString('hex')}`,
    );
    this.stream = fs.createWriteStream(this.temporary, { flags: 'wx' });
    this.stream.on('error', (err) => {
      this.failure ??= err;
    });
  }

  /** Opens the directory (made when missing) and the temporary. */
  static async open(target: string): Promise<ReportFileWriter> {
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const writer = new ReportFileWriter(target);
    await new Promise<void>((resolve, reject) => {
      writer.stream.once('open', () => resolve());
      writer.stream.once('error', reject);
    });
    return writer;
  }

  /** Writes text, waiting while the stream's buffer is full. */
  async write(text: string): Promise<void> {
    if (this.failure) throw this.failure;
    if (text.length === 0) return;
    const chunk = Buffer.from(text, 'utf8');
    this.bytes += chunk.length;
    if (!this.stream.write(chunk)) {
      await new Promise<void>((resolve, reject) => {
        const onError = (err: Error) => {
          this.stream.off('drain', onDrain);
          reject(err);
        };
        const onDrain = () => {
          this.stream.off('error', onError);
          resolve();
        };
        this.stream.once('drain', onDrain);
        this.stream.once('error', onError);
      });
    }
    if (this.failure) throw this.failure;
  }

  /** Flushes, syncs and renames into place; returns the file's size. */
  async commit(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.stream.end((err?: Error | null) => (err ? reject(err) : resolve()));
    });
    if (this.failure) throw this.failure;
    const handle = await fs.promises.open(this.temporary, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.rename(this.temporary, this.target);
    return this.bytes;
  }

  async abort(): Promise<void> {
    this.stream.destroy();
    await fs.promises.rm(this.temporary, { force: true });
  }
}

/** Removes a report's file (absent is fine). */
export async function removeReportFile(dataDir: string, id: string, format: ReportFormat) {
  try {
    await fs.promises.rm(reportFilePath(dataDir, id, format), { force: true });
  } catch (err) {
    // DATA_DIR/reports is not a directory: there is no file to remove.
    if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') throw err;
  }
}

/** Removes temporaries a killed process left in DATA_DIR/reports. */
export async function removeStaleTemporaries(dataDir: string): Promise<number> {
  let names: string[];
  try {
    names = await fs.promises.readdir(reportsDirectory(dataDir));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 0;
    throw err;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(TEMPORARY_PREFIX)) continue;
    await fs.promises.rm(path.join(reportsDirectory(dataDir), name), { force: true });
    removed++;
  }
  return removed;
}
