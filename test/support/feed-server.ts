import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/**
 * A product-feed host on 127.0.0.1 and an ephemeral port, answering as a plain web server
 * (nginx, S3, a CDN) does for a static file: `ETag` and `Last-Modified` on every 200, and
 * `304 Not Modified` (no body) when `If-None-Match` names the current ETag or, without
 * `If-None-Match`, when `If-Modified-Since` is not older than the file (RFC 9110 13.1.3).
 * HEAD answers the headers alone; `Range: bytes=a-b` is answered 206.
 *
 * Failures are set per path: answer 5xx (or 429 with Retry-After) a number of times before
 * the file; wait before answering; never answer; send the body slowly; stall mid-body.
 * Every request is recorded (method, path, headers) for the tests to count.
 */

export interface FeedFile {
  body: string | Buffer;
  /** Default: from the extension (.csv text/csv, .tsv, .json, .ndjson/.jsonl, .xml). */
  contentType?: string;
  /** Default: a strong ETag from the body's SHA-256; `false` sends none. */
  etag?: string | false;
  /** Default: a fixed date per version of the file; `false` sends none. */
  lastModified?: Date | false;
  /** Send the body with `Transfer-Encoding: chunked`, no Content-Length (a streamed answer). */
  chunked?: boolean;
}

export interface FeedFailure {
  /** The status answered (default 503). */
  status?: number;
  /** How many requests get it before the file is served (default: every request). */
  times?: number;
  /** A Retry-After header value to send with it. */
  retryAfter?: string;
  body?: string;
}

/** A generated body of `bytes` bytes, streamed in chunks (an oversized feed). */
export interface GeneratedFile {
  bytes: number;
  /** Line `i` (from 1), written until `bytes` (default a CSV product line with id SKU-i). */
  line?: (i: number) => string;
  /** First line (default a CSV header). */
  header?: string;
  /** Declare the length (Content-Length) or stream it chunked (default chunked). */
  declareLength?: boolean;
}

export interface FeedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** What was answered. */
  status: number;
  /** Resolves when the answer's connection closes: true when the whole answer was sent. */
  closed: Promise<boolean>;
}

export interface FeedServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  port: number;
  /** The URL of a path (`/feed.csv` -> http://127.0.0.1:<port>/feed.csv). */
  url(path: string): string;
  /** Serves a file at a path (replaces the one there: a new version, a new ETag). */
  set(path: string, file: FeedFile | string): void;
  /** Serves a generated body of a given size at a path. */
  generate(path: string, file: GeneratedFile): void;
  /** Answers a redirect from `path` to `location` (absolute, or a path here). */
  redirect(path: string, location: string, status?: number): void;
  /** Fails requests to a path (see FeedFailure); `fail(path)` alone answers 503 forever. */
  fail(path: string, failure?: FeedFailure): void;
  /** Waits `ms` before answering each request to a path (a slow server). */
  delay(path: string, ms: number): void;
  /** Never answers a path (a hung server): the client's timeout must end it. */
  hang(path: string): void;
  /** Sends the headers and the first `bytes` of the body, then nothing (a stalled transfer). */
  stall(path: string, bytes: number): void;
  /** Removes a path's failures, delays and hangs. */
  heal(path: string): void;
  remove(path: string): void;
  requests: FeedRequest[];
  /** Requests made to a path (all methods). */
  count(path: string): number;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  csv: 'text/csv; charset=utf-8',
  tsv: 'text/tab-separated-values; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/jsonl',
  xml: 'application/xml',
  rss: 'application/rss+xml',
  atom: 'application/atom+xml',
};

interface Served {
  body: Buffer;
  contentType: string;
  etag: string | undefined;
  lastModified: Date | undefined;
  chunked: boolean;
}

/** The first version's Last-Modified; each new version of a path is one minute later. */
const EPOCH = Date.UTC(2026, 0, 1);

function typeOf(path: string): string {
  const ext = /\.([a-z]+)$/i.exec(path)?.[1]?.toLowerCase() ?? '';
  return TYPES[ext] ?? 'application/octet-stream';
}

/** RFC 9110 weak comparison of an If-None-Match list with the current ETag. */
function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => bare(tag) === bare(etag));
}

export async function startFeedServer(t: Test): Promise<FeedServer> {
  const files = new Map<string, Served>();
  const generated = new Map<string, GeneratedFile>();
  const redirects = new Map<string, { location: string; status: number }>();
  const failures = new Map<string, { failure: FeedFailure; left: number }>();
  const delays = new Map<string, number>();
  const hangs = new Set<string>();
  const stalls = new Map<string, number>();
  const versions = new Map<string, number>();
  const requests: FeedRequest[] = [];
  const hung = new Set<http.ServerResponse>();

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const record: FeedRequest = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      status: 0,
      closed: new Promise((resolve) => res.once('close', () => resolve(res.writableFinished))),
    };
    requests.push(record);
    const answer = (status: number, headers: Record<string, string | number>, body?: Buffer) => {
      record.status = status;
      res.writeHead(status, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const respond = () => {
      if (hangs.has(path)) {
        hung.add(res);
        return;
      }
      const failing = failures.get(path);
      if (failing && failing.left > 0) {
        failing.left--;
        const headers: Record<string, string> = { 'content-type': 'text/plain' };
        if (failing.failure.retryAfter) headers['retry-after'] = failing.failure.retryAfter;
        return answer(
          failing.failure.status ?? 503,
          headers,
          Buffer.from(failing.failure.body ?? 'unavailable'),
        );
      }
      const redirect = redirects.get(path);
      if (redirect) return answer(redirect.status, { location: redirect.location });
      const big = generated.get(path);
      if (big) return sendGenerated(big);
      const file = files.get(path);
      if (!file) return answer(404, { 'content-type': 'text/plain' }, Buffer.from('not found'));
      sendFile(file);
    };

    const sendFile = (file: Served) => {
      const headers: Record<string, string | number> = { 'content-type': file.contentType };
      if (file.etag) headers.etag = file.etag;
      if (file.lastModified) headers['last-modified'] = file.lastModified.toUTCString();
      const inm = req.headers['if-none-match'];
      const ims = req.headers['if-modified-since'];
      let notModified = false;
      if (inm !== undefined) notModified = file.etag !== undefined && etagMatches(inm, file.etag);
      else if (ims !== undefined && file.lastModified) {
        const since = Date.parse(ims);
        notModified = !Number.isNaN(since) && file.lastModified.getTime() <= since;
      }
      if (notModified) return answer(304, headers);
      let body = file.body;
      let status = 200;
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      if (range) {
        const from = Number(range[1]);
        const to = range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1;
        if (from < body.length) {
          headers['content-range'] = `bytes ${from}-${to}/${body.length}`;
          body = body.subarray(from, to + 1);
          status = 206;
        }
      }
      const stallAt = stalls.get(path);
      if (stallAt !== undefined) {
        record.status = status;
        res.writeHead(status, { ...headers, 'content-length': body.length });
        res.write(body.subarray(0, stallAt));
        hung.add(res);
        return;
      }
      if (file.chunked) {
        record.status = status;
        res.writeHead(status, headers);
        if (req.method === 'HEAD') return res.end();
        // Several writes, so that the client sees a stream of chunks.
        const step = Math.max(1, Math.ceil(body.length / 8));
        for (let i = 0; i < body.length; i += step) res.write(body.subarray(i, i + step));
        return res.end();
      }
      answer(status, { ...headers, 'content-length': body.length }, body);
    };

    const sendGenerated = (big: GeneratedFile) => {
      const header = big.header ?? 'id,title,price\n';
      const line = big.line ?? ((i: number) => `SKU-${i},Generated product ${i},10.00 USD\n`);
      const headers: Record<string, string | number> = { 'content-type': typeOf(path) };
      if (big.declareLength) headers['content-length'] = big.bytes;
      record.status = 200;
      res.writeHead(200, headers);
      if (req.method === 'HEAD') return res.end();
      let sent = 0;
      let index = 0;
      let closed = false;
      res.on('close', () => (closed = true));
      // Whole lines while they fit, then line ends: exactly `bytes`, every record complete.
      const nextBlock = (): Buffer => {
        let text = sent === 0 ? header : '';
        let size = Buffer.byteLength(text);
        while (size < 65536) {
          const next = line(index + 1);
          const length = Buffer.byteLength(next);
          if (sent + size + length > big.bytes) break;
          index++;
          text += next;
          size += length;
        }
        const block = Buffer.from(text);
        if (block.length > 0) return block;
        return Buffer.alloc(Math.min(65536, big.bytes - sent), '\n');
      };
      const pump = () => {
        while (sent < big.bytes && !closed) {
          const block = nextBlock();
          sent += block.length;
          if (!res.write(block)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    };

    const wait = delays.get(path);
    if (wait !== undefined) setTimeout(respond, wait);
    else respond();
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  const feedServer: FeedServer = {
    origin,
    port,
    url: (path) => origin + path,
    set(path, file) {
      const given: FeedFile = typeof file === 'string' ? { body: file } : file;
      const body = Buffer.isBuffer(given.body) ? given.body : Buffer.from(given.body, 'utf8');
      const version = (versions.get(path) ?? 0) + 1;
      versions.set(path, version);
      generated.delete(path);
      redirects.delete(path);
      files.set(path, {
        body,
        contentType: given.contentType ?? typeOf(path),
        etag:
          given.etag === false
            ? undefined
            : (given.etag ?? `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`),
        lastModified:
          given.lastModified === false
            ? undefined
            : (given.lastModified ?? new Date(EPOCH + version * 60_000)),
        chunked: given.chunked ?? false,
      });
    },
    generate(path, file) {
      files.delete(path);
      generated.set(path, file);
    },
    redirect(path, location, status = 302) {
      redirects.set(path, {
        location: location.startsWith('/') ? origin + location : location,
        status,
      });
    },
    fail(path, failure = {}) {
      failures.set(path, { failure, left: failure.times ?? Number.POSITIVE_INFINITY });
    },
    delay(path, ms) {
      delays.set(path, ms);
    },
    hang(path) {
      hangs.add(path);
    },
    stall(path, bytes) {
      stalls.set(path, bytes);
    },
    heal(path) {
      failures.delete(path);
      delays.delete(path);
      hangs.delete(path);
      stalls.delete(path);
    },
    remove(path) {
      files.delete(path);
      generated.delete(path);
      redirects.delete(path);
    },
    requests,
    count: (path) => requests.filter((r) => r.path === path).length,
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  t.teardown(() => feedServer.close());
  return feedServer;
}
