/**
 * `agentshelf analytics import`: CDN access logs streamed line by line (gunzipped when they
 * start with gzip's magic bytes), parsed by their detected format (log-formats.ts), kept when
 * they ask for the discovery tree, and handed to the store in batches. A line that cannot be
 * read is counted with its line number and never stops the import.
 */
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';
import type { AccessRecord } from './access-record.js';
import { createParser, detectFormat, type LineParser, type LogFormat } from './log-formats.js';
import { textProblem } from '../../text.js';

/** Stores a batch; answers how many were new and how many were seen before. */
export type AccessSink = (
  records: AccessRecord[],
) => Promise<{ stored: number; duplicates: number }>;

export interface BadLine {
  file: string;
  line: number;
  reason: string;
}

export interface FileSummary {
  file: string;
  /** Null when the content is none of the three formats (then nothing was read from it). */
  format: LogFormat | null;
  gzip: boolean;
  lines: number;
  imported: number;
  duplicates: number;
  skipped: number;
  bad: number;
  error?: string;
}

export interface ImportSummary {
  files: FileSummary[];
  lines: number;
  imported: number;
  duplicates: number;
  /** Valid lines that are not requests for the discovery tree (or for another host). */
  skipped: number;
  bad: number;
  /** The first BAD_LINES_LISTED bad lines, with file and line number. */
  bad_lines: BadLine[];
  by_format: Record<LogFormat, { files: number; lines: number; imported: number }>;
  duration_ms: number;
}

export interface ImportOptions {
  sink: AccessSink;
  /** Whether a path is a request for the discovery tree (others are counted as skipped). */
  isDiscoveryPath: (path: string) => boolean;
  /** Records per sink call (default 5,000). */
  batchSize?: number;
  /** Only requests for this host count (Cloudflare and CloudFront logs name it; nginx's not). */
  host?: string;
  /** What `-` reads (the CLI passes process.stdin). */
  stdin?: Readable;
  /** Called as lines are read (at most every 10,000 lines, and at the end of each file). */
  onProgress?: (linesRead: number) => void;
}

export const BAD_LINES_LISTED = 20;

/**
 * The store refused a batch: the import stops (the batches before it are stored, and importing
 * the same files again adds only what is missing).
 */
export class StoreError extends Error {
  constructor(
    readonly file: string,
    readonly afterLine: number,
    override readonly cause: unknown,
  ) {
    super(`${file}: the store refused a batch near line ${afterLine}: ${(cause as Error).message}`);
    this.name = 'StoreError';
  }
}
const PROGRESS_EVERY = 10_000;

/** A file (or `-`: standard input), and whether it starts with gzip's magic bytes. */
async function openInput(
  file: string,
  stdin: Readable | undefined,
): Promise<{ raw: Readable; gzip: boolean }> {
  const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
  if (file !== '-') {
    const gzip = isGzip(await head(file, 2));
    return { raw: fs.createReadStream(file, { highWaterMark: 256 * 1024 }), gzip };
  }
  if (!stdin) throw new Error('no standard input');
  // Peek at the first chunk, then hand on a stream that starts with it.
  const chunks = stdin[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await chunks.next();
  const head2 = first.done ? Buffer.alloc(0) : Buffer.from(first.value);
  async function* all() {
    if (head2.length > 0) yield head2;
    for (let next = await chunks.next(); !next.done; next = await chunks.next())
      yield Buffer.from(next.value);
  }
  return { raw: Readable.from(all(), { objectMode: false }), gzip: isGzip(head2) };
}

/** The first bytes of a file (to tell gzip from text). */
async function head(file: string, n: number): Promise<Buffer> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Longest line kept; a longer one is a bad line (and is never held whole in memory). */
export const MAX_LINE = 1024 * 1024;
/** Stands for a line longer than MAX_LINE in what lines() yields. */
const TOO_LONG = '\u0000too long';

/** The lines of a stream, decoded as UTF-8, without their line ends. */
async function* lines(stream: Readable): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let overlong = false;
  for await (const chunk of stream) {
    const parts = (rest + decoder.write(chunk as Buffer)).split('\n');
    rest = parts.pop()!;
    if (overlong && parts.length > 0) {
      parts[0] = TOO_LONG; // the end of the line that was too long
      overlong = false;
    }
    for (let i = 0; i < parts.length; i++) if (parts[i]!.length > MAX_LINE) parts[i] = TOO_LONG;
    if (rest.length > MAX_LINE) {
      overlong = true;
      rest = '';
    }
    yield parts;
  }
  rest += decoder.end();
  if (overlong) yield [TOO_LONG];
  else if (rest !== '') yield [rest];
}

export async function importLogs(files: string[], options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  const batchSize = options.batchSize ?? 5000;
  const summary: ImportSummary = {
    files: [],
    lines: 0,
    imported: 0,
    duplicates: 0,
    skipped: 0,
    bad: 0,
    bad_lines: [],
    by_format: {
      nginx: { files: 0, lines: 0, imported: 0 },
      cloudflare: { files: 0, lines: 0, imported: 0 },
      cloudfront: { files: 0, lines: 0, imported: 0 },
    },
    duration_ms: 0,
  };
  let totalRead = 0;
  let reported = 0;
  const host = options.host?.toLowerCase();

  for (const file of files) {
    const fileSummary: FileSummary = {
      file,
      format: null,
      gzip: false,
      lines: 0,
      imported: 0,
      duplicates: 0,
      skipped: 0,
      bad: 0,
    };
    summary.files.push(fileSummary);
    let raw: Readable;
    try {
      const input = await openInput(file, options.stdin);
      raw = input.raw;
      fileSummary.gzip = input.gzip;
    } catch (err) {
      fileSummary.error = `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
      continue;
    }
    const stream: Readable = fileSummary.gzip
      ? raw.pipe(zlib.createGunzip({ chunkSize: 256 * 1024 }))
      : raw;
    raw.on('error', (err) => stream.destroy(err));

    let parser: LineParser | null = null;
    let batch: AccessRecord[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      let result: { stored: number; duplicates: number };
      try {
        result = await options.sink(batch);
      } catch (err) {
        throw new StoreError(file, fileSummary.lines, err);
      }
      const { stored, duplicates } = result;
      batch = [];
      fileSummary.imported += stored;
      fileSummary.duplicates += duplicates;
    };
    try {
      let n = 0;
      for await (const chunk of lines(stream)) {
        for (let line of chunk) {
          n++;
          if (line === TOO_LONG) {
            fileSummary.bad++;
            if (summary.bad_lines.length < BAD_LINES_LISTED)
              summary.bad_lines.push({ file, line: n, reason: `longer than ${MAX_LINE} bytes` });
            continue;
          }
          if (line.endsWith('\r')) line = line.slice(0, -1);
          if (!parser) {
            if (line.trim() === '') continue;
            const format = detectFormat(line);
            if (!format) {
              fileSummary.error =
                'not a log format agentshelf reads (nginx combined, Cloudflare Logpush NDJSON, CloudFront W3C)';
              break;
            }
            parser = createParser(format);
            fileSummary.format = format;
          }
          const result = parser.parse(line);
          if ('ignore' in result) continue;
          if ('bad' in result) {
            fileSummary.bad++;
            if (summary.bad_lines.length < BAD_LINES_LISTED)
              summary.bad_lines.push({ file, line: n, reason: result.bad });
            continue;
          }
          if (
            (host && result.host !== null && result.host.toLowerCase() !== host) ||
            !options.isDiscoveryPath(result.record.path)
          ) {
            fileSummary.skipped++;
            continue;
          }
          // Text a store cannot hold (an NDJSON line's \u0000, say): the line fails alone.
          const unfit = textFaultOf(result.record);
          if (unfit) {
            fileSummary.bad++;
            if (summary.bad_lines.length < BAD_LINES_LISTED)
              summary.bad_lines.push({ file, line: n, reason: unfit });
            continue;
          }
          batch.push(result.record);
          if (batch.length >= batchSize) await flush();
        }
        if (fileSummary.error) break;
        if (options.onProgress && totalRead + n - reported >= PROGRESS_EVERY) {
          reported = totalRead + n;
          options.onProgress(reported);
        }
        fileSummary.lines = n;
      }
      fileSummary.lines = n;
      await flush();
    } catch (err) {
      if (err instanceof StoreError) throw err;
      // A truncated gzip member or a read error ends this file; what was read is kept.
      await flush();
      const e = err as NodeJS.ErrnoException;
      fileSummary.error =
        e.code === 'Z_BUF_ERROR' || e.code === 'Z_DATA_ERROR'
          ? `gzip data is damaged after line ${fileSummary.lines}`
          : `read failed after line ${fileSummary.lines}: ${e.code ?? e.message}`;
    } finally {
      raw.destroy();
    }
    totalRead += fileSummary.lines;
    options.onProgress?.(totalRead);
    summary.lines += fileSummary.lines;
    summary.imported += fileSummary.imported;
    summary.duplicates += fileSummary.duplicates;
    summary.skipped += fileSummary.skipped;
    summary.bad += fileSummary.bad;
    if (fileSummary.format) {
      const f = summary.by_format[fileSummary.format];
      f.files++;
      f.lines += fileSummary.lines;
      f.imported += fileSummary.imported;
    }
  }
  summary.duration_ms = Math.round(performance.now() - started);
  return summary;
}

/** Why a parsed line's text cannot be stored (src/text.ts), or undefined. */
function textFaultOf(record: AccessRecord): string | undefined {
  const fields: Array<[string, string | null | undefined]> = [
    ['path', record.path],
    ['method', record.method],
    ['user agent', record.userAgent],
    ['signature agent', record.signatureAgent],
    ['request id', record.dedupeKey],
  ];
  for (const [name, value] of fields) {
    const problem = typeof value === 'string' ? textProblem(value) : undefined;
    if (problem) return `${name} ${problem}`;
  }
  return undefined;
}
