import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/store.js';
import {
  ALLOWED_METHODS,
  CACHE_NONE,
  COMMON_HEADERS,
  CONTENT_TYPES,
  PREFLIGHT_HEADERS,
  discoveryError,
  rateLimitDetails,
  rateWindows,
  resolvePublicPath,
  type DiscoveryErrorKind,
} from '../../domain/discovery/policy.js';
import { PUBLISHED_MARKER } from '../../domain/discovery/layout.js';
import {
  FileCache,
  representation,
  type PublishedFile,
  type Representation,
} from './file-cache.js';
import { IpRateLimiter } from './rate-limit.js';
import { RequestLog } from './request-log.js';
import type { AccessRecord } from '../../domain/analytics/access-record.js';
import { INTERNAL_ERROR, jsonRpcError, TRANSPORT_ERROR } from './mcp.js';
import { refuseMcp, sendJson, serveUcp, ucpRouteOf } from './ucp.js';
import type { CatalogDeps } from '../../domain/ucp/catalog.js';
import { CursorSigner } from '../../domain/ucp/cursor.js';
import { SecretBox } from '../../domain/integrations/secret-box.js';
import { baseUrl, closeGracefully, listen } from '../listen.js';
import { PollingWorker } from '../../runtime/polling-worker.js';
import {
  createWebBotAuthVerifier,
  type WebBotAuthOptions,
} from '../../domain/analytics/web-bot-auth.js';

export interface DiscoveryServerOptions {
  config: Config;
  /** The store, for recording requests. */
  db: Db;
  logger: Logger;
  /** The time; tests pass a clock they control (limits, recorded times). */
  now?: () => Date;
  /** Overrides FEEDS_PORT (0 picks a free port). */
  port?: number;
  /** How often the publication marker is checked, in ms (default 1000). */
  revalidateMs?: number;
  /** How often recorded requests are written, in ms (default 1000). */
  flushMs?: number;
  /** Record each request as an analytics interaction (default true; benchmarks turn it off). */
  recordRequests?: boolean;
  /** How Web Bot Auth signatures are checked (default: public key directories only). */
  webBotAuth?: WebBotAuthOptions;
}

export interface DiscoveryServer {
  url: string;
  port: number;
  /** Re-checks cached files now (the pipeline of this process has just published). */
  revalidate(): void;
  /** Writes the requests recorded so far. */
  flushRequests(): Promise<void>;
  /** Requests written as interactions so far, and dropped because the queue was full. */
  recorded(): { stored: number; dropped: number };
  close(): Promise<void>;
}

/**
 * The discovery API on FEEDS_PORT: the published tree served like a CDN would (CONTRACT
 * part 4). node:http rather than Koa, because this path is all about requests per second.
 */
export async function startDiscoveryServer(
  options: DiscoveryServerOptions,
): Promise<DiscoveryServer> {
  const { config } = options;
  const now = options.now ?? (() => new Date());
  const root = path.resolve(config.PUBLIC_DIR);
  const cacheBytes = config.DISCOVERY_CACHE_MB * 1024 * 1024;
  const cache = new FileCache(root, {
    maxBytes: cacheBytes,
    maxFileBytes: Math.min(16 * 1024 * 1024, cacheBytes / 8),
  });
  const limiter = new IpRateLimiter(
    rateWindows({
      minute: config.DISCOVERY_LIMIT_PER_MINUTE,
      hour: config.DISCOVERY_LIMIT_PER_HOUR,
      day: config.DISCOVERY_LIMIT_PER_DAY,
    }),
    () => now().getTime(),
  );
  const requests = new RequestLog(options.db, options.logger, {
    ...(options.flushMs ? { flushMs: options.flushMs } : {}),
    currency: config.DEFAULT_CURRENCY,
  });
  const recorder = requestRecorder(options, requests);
  const catalog: CatalogDeps = {
    db: options.db,
    storeName: config.STORE_NAME,
    currency: config.DEFAULT_CURRENCY,
    cursors: new CursorSigner(() => new SecretBox(config).currentKey().key),
  };
  const server = http.createServer(
    requestHandler({ catalog, cache, limiter, recorder, now, logger: options.logger, config }),
  );
  server.keepAliveTimeout = 5_000;
  let port: number;
  try {
    port = await listen(server, options.port ?? config.FEEDS_PORT, config.HOST);
  } catch (err) {
    await requests.close();
    throw err;
  }

  // A build in another process tells us through the marker it replaces after publishing.
  const marker = markerWatch(root, cache, options.revalidateMs ?? 1000);
  await marker.check();
  marker.poller.start(options.revalidateMs ?? 1000);
  const prune = new PollingWorker({
    tick: () => void limiter.prune(),
    intervalMs: 60_000,
    onError: () => undefined,
  });
  prune.start(60_000);

  let closing: Promise<void> | undefined;
  return {
    url: baseUrl(config.HOST, port),
    port,
    revalidate: () => cache.invalidate(),
    flushRequests: () => recorder.settle().then(() => requests.flush()),
    recorded: () => ({ stored: requests.stored, dropped: requests.dropped }),
    close: () =>
      (closing ??= (async () => {
        await Promise.all([marker.poller.stop(), prune.stop()]);
        await closeGracefully(server, config.SHUTDOWN_TIMEOUT_MS);
        await recorder.settle();
        await requests.close();
      })()),
  };
}

/** Polls the publication marker; a changed one (another process published) empties the cache. */
function markerWatch(
  root: string,
  cache: FileCache,
  intervalMs: number,
): { check: () => Promise<void>; poller: PollingWorker } {
  let markerStamp: string | undefined;
  const check = async () => {
    try {
      const s = await fs.promises.stat(path.join(root, PUBLISHED_MARKER), { bigint: true });
      const stamp = `${s.ino}-${s.mtimeNs}`;
      if (markerStamp !== undefined && stamp !== markerStamp) cache.invalidate();
      markerStamp = stamp;
    } catch {
      if (markerStamp !== undefined) cache.invalidate();
      markerStamp = '';
    }
  };
  return {
    check,
    poller: new PollingWorker({ tick: check, intervalMs, onError: () => undefined }),
  };
}

/** What a UCP catalog call adds to its request's record (AccessRecord.ucpAgent, .search). */
type UcpRecord = Pick<AccessRecord, 'ucpAgent' | 'search'>;

type RecordRequest = (
  at: Date,
  req: http.IncomingMessage,
  urlPath: string,
  status: number,
  bytes: number,
  ucp?: UcpRecord,
) => void;

/**
 * Records each answered request in the request log; a request signed for Web Bot Auth once
 * its signature is checked (after the answer has gone). settle() waits for those checks.
 */
function requestRecorder(
  options: DiscoveryServerOptions,
  requests: RequestLog,
): { record: RecordRequest; settle: () => Promise<void> } {
  const { config } = options;
  const recording = options.recordRequests ?? true;
  const verifier = createWebBotAuthVerifier(
    options.webBotAuth ?? { allowPrivate: config.ALLOW_PRIVATE_TARGETS },
  );
  const verifying = new Set<Promise<void>>();
  const record: RecordRequest = (at, req, urlPath, status, bytes, ucp) => {
    if (!recording) return;
    const signature = req.headers['signature-agent'];
    const entry = {
      ...ucp,
      at,
      method: req.method ?? 'GET',
      path: urlPath,
      status,
      bytes,
      userAgent: req.headers['user-agent'] ?? null,
      signatureAgent: typeof signature === 'string' ? signature : null,
      dedupeKey: null,
      source: 'server' as const,
    };
    if (!entry.signatureAgent || !req.headers.signature || !req.headers['signature-input'])
      return requests.record(entry);
    // A signed browsing agent: recorded once its signature is checked (the answer has gone).
    const checking = verifier
      .verify({
        method: entry.method,
        url: req.url ?? urlPath,
        protocol: (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
        headers: req.headers,
      })
      .then(
        (result) => requests.record({ ...entry, verified: result.verified }),
        () => requests.record(entry),
      )
      .finally(() => verifying.delete(checking));
    verifying.add(checking);
  };
  const settle = async () => {
    while (verifying.size > 0) await Promise.all([...verifying]);
  };
  return { record, settle };
}

/** Answers with a JSON error (CONTRACT part 4); returns the body bytes sent. */
function sendError(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  kind: DiscoveryErrorKind,
  details: string,
  limitHeaders: string[],
  extra: string[] = [],
): number {
  const { status, body } = discoveryError(kind, details);
  const head = req.method === 'HEAD';
  const bytes = Buffer.byteLength(body);
  res.writeHead(status, [
    ...COMMON_HEADERS.flat(),
    'Content-Type',
    CONTENT_TYPES['.json']!,
    'Content-Length',
    String(bytes),
    'Cache-Control',
    CACHE_NONE,
    ...limitHeaders,
    ...extra,
  ]);
  res.end(head ? undefined : body);
  return head ? 0 : bytes;
}

interface HandlerParts {
  catalog: CatalogDeps;
  cache: FileCache;
  limiter: IpRateLimiter;
  recorder: { record: RecordRequest };
  now: () => Date;
  logger: Logger;
  config: Config;
}

/** The request path of a target: its query cut off, an absolute-form target's path taken. */
function pathOf(target: string): string {
  const q = target.indexOf('?');
  const urlPath = q < 0 ? target : target.slice(0, q);
  return urlPath.startsWith('/') ? urlPath : absoluteFormPath(urlPath);
}

/**
 * Answers what is not a file: the rate limit, a preflight, a method other than GET and HEAD,
 * a path outside the tree. Returns [status, bytes] when it answered, undefined otherwise.
 */
function refusal(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  resolved: ReturnType<typeof resolvePublicPath>,
  decision: ReturnType<IpRateLimiter['hit']>,
  limitHeaders: string[],
): [number, number] | undefined {
  if (!decision.allowed) {
    const bytes = sendError(
      req,
      res,
      'rate_limited',
      rateLimitDetails(decision.window!),
      limitHeaders,
      ['Retry-After', String(decision.retryAfter)],
    );
    return [429, bytes];
  }
  const method = req.method;
  if (method === 'OPTIONS') {
    res.writeHead(204, [
      ...COMMON_HEADERS.flat(),
      ...PREFLIGHT_HEADERS.flat(),
      'Cache-Control',
      CACHE_NONE,
      ...limitHeaders,
    ]);
    res.end();
    return [204, 0];
  }
  if (method !== 'GET' && method !== 'HEAD') {
    const bytes = sendError(
      req,
      res,
      'method_not_allowed',
      `method: use ${ALLOWED_METHODS}`,
      limitHeaders,
      ['Allow', ALLOWED_METHODS],
    );
    return [405, bytes];
  }
  if ('error' in resolved) {
    const details =
      resolved.error === 'bad_request' ? 'path: malformed percent-encoding' : 'path: not found';
    const bytes = sendError(req, res, resolved.error, details, limitHeaders);
    return [resolved.error === 'bad_request' ? 400 : 404, bytes];
  }
  return undefined;
}

/** The discovery server's request handler: limits, refusals, then the file (cached or not). */
function requestHandler(parts: HandlerParts): http.RequestListener {
  const { cache, limiter, now, logger } = parts;
  const { record } = parts.recorder;
  const trustProxy = parts.config.DISCOVERY_TRUST_PROXY;
  return (req, res) => {
    const at = now();
    const urlPath = pathOf(req.url ?? '/');
    const resolved = resolvePublicPath(urlPath);
    const decision = limiter.hit(clientAddress(req, trustProxy));
    const limitHeaders =
      decision.remaining === null ? [] : ['X-RateLimit-Remaining', String(decision.remaining)];
    const route = ucpRouteOf(urlPath);
    const failed = (err: unknown) => {
      logger.error({ err, path: urlPath }, 'discovery: could not answer');
      if (res.headersSent) res.destroy();
      else if (route === 'mcp') {
        const body = jsonRpcError(null, INTERNAL_ERROR, 'Internal error: could not answer');
        sendJson(req, res, 500, body, limitHeaders);
      } else sendError(req, res, 'internal', 'the request could not be answered', limitHeaders);
      record(at, req, urlPath, 500, 0);
    };
    if (route === 'mcp' && !decision.allowed) {
      // An MCP client reads a JSON-RPC error, not the tree's JSON error.
      refuseMcp(req, res, {
        status: 429,
        code: TRANSPORT_ERROR,
        message: `Too many requests: ${rateLimitDetails(decision.window!)}`,
        headers: [...limitHeaders, 'Retry-After', String(decision.retryAfter)],
      }).then((outcome) => record(at, req, urlPath, outcome.status, outcome.bytes), failed);
      return;
    }
    if (route && decision.allowed) {
      serveUcp(req, res, route, parts.catalog, limitHeaders).then((outcome) => {
        const header = req.headers['ucp-agent'];
        const search = outcome.call?.query === undefined ? undefined : outcome.call;
        record(at, req, urlPath, outcome.status, outcome.bytes, {
          ucpAgent: outcome.agentProfile ?? (typeof header === 'string' ? header : null),
          ...(search ? { search: { query: search.query!, results: search.results } } : {}),
        });
      }, failed);
      return;
    }
    const refused = refusal(req, res, resolved, decision, limitHeaders);
    if (refused) return record(at, req, urlPath, refused[0], refused[1]);
    if ('error' in resolved) return; // answered by refusal()
    const done = (outcome: [number, number]) => record(at, req, urlPath, outcome[0], outcome[1]);
    const hit = cache.get(resolved.file);
    if (hit) {
      // The hot path: a file in memory is answered without waiting on anything.
      const outcome = respond(req, res, hit, limitHeaders);
      if (Array.isArray(outcome)) done(outcome);
      else outcome.then(done, failed);
      return;
    }
    cache.load(resolved.file).then(async (file) => {
      if (!file) {
        const bytes = sendError(req, res, 'not_found', 'path: not found', limitHeaders);
        return record(at, req, urlPath, 404, bytes);
      }
      done(await respond(req, res, file, limitHeaders));
    }, failed);
  };
}

/** The representation a client asked for (br, then gzip, when accepted and published). */
function choose(file: PublishedFile, acceptEncoding: string | undefined): Representation {
  if (acceptEncoding && (file.br || file.gzip)) {
    const accepted = acceptedEncodings(acceptEncoding);
    if (file.br && accepted.br) return file.br;
    if (file.gzip && accepted.gzip) return file.gzip;
  }
  return file.identity;
}

const acceptMemo = new Map<string, { br: boolean; gzip: boolean }>();

/** Which of br and gzip an Accept-Encoding header allows (q=0 refuses; `*` stands for both). */
export function acceptedEncodings(header: string): { br: boolean; gzip: boolean } {
  const known = acceptMemo.get(header);
  if (known) return known;
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [token, ...params] = part.trim().toLowerCase().split(';');
    if (!token) continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) weight = Number(m[1]);
    }
    q.set(token, weight);
  }
  const allowed = (name: string) => (q.get(name) ?? q.get('*') ?? 0) > 0;
  const result = { br: allowed('br'), gzip: allowed('gzip') || allowed('x-gzip') };
  if (acceptMemo.size > 256) acceptMemo.clear();
  acceptMemo.set(header, result);
  return result;
}

function notModified(req: http.IncomingMessage, rep: Representation): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    if (inm.trim() === '*') return true;
    // Weak comparison, as RFC 9110 asks of If-None-Match.
    return inm.split(',').some((tag) => tag.trim().replace(/^W\//, '') === rep.etag);
  }
  const ims = req.headers['if-modified-since'];
  if (ims !== undefined) {
    const since = Date.parse(ims);
    return !Number.isNaN(since) && Math.floor(rep.mtimeMs / 1000) * 1000 <= since;
  }
  return false;
}

/** Answers with the representation the client accepts; returns [status, body bytes]. */
function respond(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  file: PublishedFile,
  limitHeaders: string[],
): [number, number] | Promise<[number, number]> {
  const rep = choose(file, req.headers['accept-encoding']);
  if (!rep.body) return serveFromDisk(req, res, file.file, rep, limitHeaders);
  if (notModified(req, rep)) {
    res.writeHead(
      304,
      limitHeaders.length ? rep.notModifiedHeaders.concat(limitHeaders) : rep.notModifiedHeaders,
    );
    res.end();
    return [304, 0];
  }
  res.writeHead(200, limitHeaders.length ? rep.headers.concat(limitHeaders) : rep.headers);
  if (req.method === 'HEAD') {
    res.end();
    return [200, 0];
  }
  res.end(rep.body);
  return [200, rep.size];
}

/** Serves a file too large to hold in memory, from the handle whose stat names it. */
async function serveFromDisk(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  file: string,
  chosen: Representation,
  limitHeaders: string[],
): Promise<[number, number]> {
  const handle = await fs.promises.open(chosen.path, 'r');
  let handed = false;
  try {
    const s = await handle.stat({ bigint: true });
    const stamp = `${s.ino.toString(36)}-${s.mtimeNs.toString(36)}-${s.size.toString(36)}`;
    const rep = representation(
      file,
      chosen.path,
      chosen.encoding,
      stamp,
      Number(s.size),
      Number(s.mtimeMs),
      undefined,
    );
    if (notModified(req, rep)) {
      res.writeHead(304, rep.notModifiedHeaders.concat(limitHeaders));
      res.end();
      return [304, 0];
    }
    res.writeHead(200, rep.headers.concat(limitHeaders));
    if (req.method === 'HEAD') {
      res.end();
      return [200, 0];
    }
    const stream = handle.createReadStream({ highWaterMark: 1 << 20 });
    handed = true;
    stream.pipe(res);
    stream.on('error', () => res.destroy());
    res.on('close', () => stream.destroy());
    return [200, rep.size];
  } finally {
    if (!handed) await handle.close();
  }
}

/** The client's address: the socket's, or with a trusted proxy the last X-Forwarded-For hop. */
function clientAddress(req: http.IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    if (typeof forwarded === 'string' && forwarded) {
      const hops = forwarded.split(',');
      const last = hops[hops.length - 1]!.trim();
      if (last) return last;
    }
  }
  const address = req.socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** The path of an absolute-form request target (`GET http://host/v1/index.json`). */
function absoluteFormPath(target: string): string {
  try {
    return new URL(target).pathname;
  } catch {
    return target;
  }
}
