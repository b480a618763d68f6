import fs from 'node:fs';
import path from 'node:path';
import type { ReportFormat } from '../../db/schema.js';
import { removeStaleTemporaries as removePublisherTemporaries } from '../../publish/fs.js';

/**
 * Where report files live: DATA_DIR/reports/<report_id>.<format>. Outside PUBLIC_DIR: a
 * report is reached only through the authenticated download endpoint.
 */
export function reportsDirectory(dataDir: string): string {
  return path.join(dataDir, 'reports');
}

export function reportFilePath(dataDir: string, id: string, format: ReportFormat): string {
  return path.join(reportsDirectory(dataDir), reportFileName(id, format));
}

export const REPORT_CONTENT_TYPES: Record<ReportFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  json: 'application/json; charset=utf-8',
  html: 'text/html; charset=utf-8',
};

/** The file name of a report under reportsDirectory (its key for the publisher). */
export function reportFileName(id: string, format: ReportFormat): string {
  return `${id}.${format}`;
}

/** Temporaries of versions before the publisher (src/publish/) started with this. */
const OLD_TEMPORARY_PREFIX = '.tmp-';

/** Removes a report's file (absent is fine). */
export async function removeReportFile(dataDir: string, id: string, format: ReportFormat) {
  try {
    await fs.promises.rm(reportFilePath(dataDir, id, format), { force: true });
  } catch (err) {
    // DATA_DIR/reports is not a directory: there is no file to remove.
    if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') throw err;
  }
}

/**
 * Removes the temporaries a killed process left in DATA_DIR/reports: the publisher's
 * (`.<name>.tmp-<pid>-<random>`) and those of older versions (`.tmp-<name>.<random>`).
 */
export async function removeStaleTemporaries(dataDir: string): Promise<number> {
  let removed = await removePublisherTemporaries(reportsDirectory(dataDir));
  let names: string[];
  try {
    names = await fs.promises.readdir(reportsDirectory(dataDir));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 0;
    throw err;
  }
  for (const name of names) {
    if (!name.startsWith(OLD_TEMPORARY_PREFIX)) continue;
    await fs.promises.rm(path.join(reportsDirectory(dataDir), name), { force: true });
    removed++;
  }
  return removed;
}
