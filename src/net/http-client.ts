import http from 'node:http';
import https from 'node:https';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { jsonNestsDeeperThan } from './json-depth.js';
import { parseRetryAfter } from './retry-after.js';
import { checkAddress, guardedLookup, hostOf, parseTargetUrl } from './target-guard.js';

/**
 * The outbound HTTP client of everything that reads from a merchant's platform (integrations:
 * Shopify, WooCommerce, feed URLs) or writes to an object store (src/publish/s3.ts). Every hop goes through the SSRF guard (a redirect to a
 * private address is refused like the first URL), answers are size-capped and time-capped,
 * and requests that are safe to repeat are retried with backoff on network errors, timeouts,
 * 5xx and 429.
 */

/** A body read from a source that can be opened again for a retry (a file), of a known length. */
export interface StreamBody {
  length: number;
  open(): Readable;
}

export interface HttpRequest {
  method?: 'GET' | 'POST' | 'HEAD' | 'PUT' | 'DELETE' | 'PATCH';
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer | StreamBody;
  /** Longest wait for the response headers, and longest silence while reading the body. */
  timeoutMs?: number;
  /** The body is cut with HttpError `too_large` past this many bytes (default 50 MiB). */
  maxBytes?: number;
  /** Retry on network errors, timeouts, 5xx and 429 (default: GET and HEAD only). */
  retry?: boolean;
  /**
   * Retry a timeout too (default true). A feed read sets false: a server silent for the whole
   * idle timeout fails the run at once instead of holding it for every attempt.
   */
  retryTimeouts?: boolean;
  /** Attempts in all when retrying (default 4). */
  attempts?: number;
  /** Redirects followed, each hop checked again (default 5; 0 answers the 3xx as it is). */
  maxRedirects?: number;
}

export interface HttpResponse {
  status: number;
  /** Lower-case names; a repeated header is joined with ", ". */
  headers: Record<string, string>;
  /** The URL that answered (after redirects). */
  url: string;
  /** The body, size-capped; read it once, or call discard(). */
  body: Readable;
  text(): Promise<string>;
  json(): Promise<unknown>;
  discard(): void;
}

export type HttpErrorCode =
  'refused' | 'timeout' | 'network' | 'too_large' | 'too_many_redirects' | 'aborted' | 'bad_json';

/** A request that got no usable answer; `message` says why, in words for a merchant. */
export class HttpError extends Error {
  constructor(
    readonly code: HttpErrorCode,
    message: string,
    readonly url: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface HttpClientOptions {
  allowPrivate: boolean;
  /** Aborts every request and backoff wait (shutdown, a cancelled sync). */
  signal?: AbortSignal;
  /** The wait between retries (tests pass an instant or recorded one). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Base of the exponential backoff (default 500 ms; doubled per attempt, with jitter). */
  backoffMs?: number;
  /** Called before each retry: what failed and how long we wait. */
  onRetry?: (info: { url: string; attempt: number; waitMs: number; reason: string }) => void;
  userAgent?: string;
  /**
   * Host names (or IP literals) let through the guard although they are private: one intranet
   * host an operator trusts, without ALLOW_PRIVATE_TARGETS opening every private address.
   * Matched against each hop's host exactly (lower case); a redirect elsewhere is judged anew.
   */
  trustedHosts?: readonly string[];
  /** The clock Retry-After dates are read against (default: the system clock). */
  now?: () => Date;
  /** The idle timeout of requests that do not set `timeoutMs` (default 30 s). */
  timeoutMs?: number;
}

export interface HttpClient {
  request(req: HttpRequest): Promise<HttpResponse>;
}

const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
/** The deepest JSON answer parsed (feeds keep their own, tighter bound per item). */
const MAX_JSON_DEPTH = 256;
/** The longest Retry-After honoured between attempts; longer asks fail the request. */
const MAX_RETRY_WAIT_MS = 60_000;

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  delay(ms, undefined, signal ? { signal } : {});

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const sleep = options.sleep ?? defaultSleep;
  const backoff = options.backoffMs ?? 500;
  const now = options.now ?? (() => new Date());
  const trusted = new Set((options.trustedHosts ?? []).map((h) => h.toLowerCase()));
  // The guard runs in the agents' lookup (the addresses connected to are the ones checked);
  // trusted hosts get agents of their own that let private addresses through.
  const makeAgents = (allowPrivate: boolean) => {
    const agentOptions = { keepAlive: true, lookup: guardedLookup({ allowPrivate }) };
    return { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  };
  const guarded = makeAgents(options.allowPrivate);
  const open = trusted.size > 0 && !options.allowPrivate ? makeAgents(true) : guarded;

  async function request(req: HttpRequest): Promise<HttpResponse> {
    const method = req.method ?? 'GET';
    const retry = req.retry ?? method !== 'POST';
    const attempts = retry ? (req.attempts ?? 4) : 1;
    for (let attempt = 1; ; attempt++) {
      let reason: string;
      let waitMs = backoff * 2 ** (attempt - 1) * (0.75 + Math.random() / 2);
      try {
        const res = await follow(req, method);
        const retryable = res.status >= 500 || res.status === 429;
        if (!retryable || attempt >= attempts) return res;
        const after = parseRetryAfter(res.headers['retry-after'], now());
        // Asked to wait longer than we would: the answer as it is (the caller says when next).
        if (after !== undefined && after * 1000 > MAX_RETRY_WAIT_MS) return res;
        res.discard();
        reason = `HTTP ${res.status}`;
        if (after !== undefined) waitMs = Math.max(waitMs, after * 1000);
      } catch (err) {
        if (!(err instanceof HttpError) || attempt >= attempts) throw err;
        if (err.code !== 'timeout' && err.code !== 'network') throw err;
        if (err.code === 'timeout' && req.retryTimeouts === false) throw err;
        reason = err.message;
      }
      options.onRetry?.({ url: req.url, attempt, waitMs: Math.round(waitMs), reason });
      try {
        await sleep(Math.round(waitMs), options.signal);
      } catch {
        throw new HttpError('aborted', 'stopped before the request was retried', req.url);
      }
    }
  }

  async function follow(req: HttpRequest, method: string): Promise<HttpResponse> {
    let hopReq: HttpRequest = req;
    const maxRedirects = req.maxRedirects ?? 5;
    for (let hop = 0; ; hop++) {
      const res = await once(hopReq, method);
      const location = res.headers.location;
      if (!REDIRECTS.has(res.status) || !location || maxRedirects === 0) return res;
      res.discard();
      if (hop >= maxRedirects)
        throw new HttpError('too_many_redirects', `more than ${maxRedirects} redirects`, req.url);
      let next: URL;
      try {
        next = new URL(location, hopReq.url);
      } catch {
        throw new HttpError('network', `a redirect to an invalid address: ${location}`, req.url);
      }
      const headers = { ...hopReq.headers };
      // Credentials go to the origin they were given for, never to where it redirects.
      if (next.origin !== new URL(hopReq.url).origin)
        for (const name of Object.keys(headers)) if (SENSITIVE.test(name)) delete headers[name];
      let body = hopReq.body;
      // A 303 (and, as browsers do, a 301/302 answering a POST) turns into a GET, bodiless.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        for (const name of Object.keys(headers)) if (/^content-/i.test(name)) delete headers[name];
      }
      hopReq = { ...hopReq, url: next.toString(), headers, body };
    }
  }

  function once(req: HttpRequest, method: string): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      let url: URL;
      try {
        url = parseTargetUrl(req.url);
        checkAddress(hostOf(url), {
          allowPrivate: options.allowPrivate || trusted.has(hostOf(url).toLowerCase()),
        });
      } catch (err) {
        return reject(new HttpError('refused', (err as Error).message, req.url));
      }
      if (options.signal?.aborted)
        return reject(new HttpError('aborted', 'stopped before the request was sent', req.url));
      const timeoutMs = req.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
      const isHttps = url.protocol === 'https:';
      const headers: Record<string, string> = {
        'user-agent': options.userAgent ?? 'agentshelf',
        'accept-encoding': 'identity',
        ...req.headers,
      };
      if (req.body !== undefined) headers['content-length'] = String(lengthOf(req.body));
      const agents = trusted.has(hostOf(url).toLowerCase()) ? open : guarded;
      const request = (isHttps ? https : http).request(url, {
        method,
        headers,
        agent: isHttps ? agents.https : agents.http,
        signal: options.signal,
      });
      request.setTimeout(timeoutMs, () => {
        request.destroy(
          new HttpError('timeout', `no answer within ${timeoutMs / 1000} s`, req.url),
        );
      });
      request.on('error', (err: NodeJS.ErrnoException) =>
        reject(toHttpError(err, req.url, options.signal)),
      );
      request.on('response', (res) => {
        // From here the body's own timeout (below) applies, not the wait for the headers.
        request.setTimeout(0);
        const capped = new SizeCap(maxBytes, req.url);
        // The cap (or a cut connection) can fail the body before anyone reads it: kept on the
        // stream (a reader's next read throws it), never an uncaught 'error' event.
        capped.on('error', () => {});
        res.setTimeout(timeoutMs, () =>
          res.destroy(
            new HttpError(
              'timeout',
              `the answer stalled: no byte for ${timeoutMs / 1000} s`,
              req.url,
            ),
          ),
        );
        res.on('error', (err: NodeJS.ErrnoException) =>
          capped.destroy(toHttpError(err, req.url, options.signal)),
        );
        // Stopped while the body streams (a deadline, a shutdown): the reader learns why.
        const onAbort = () =>
          capped.destroy(toHttpError(new Error('aborted'), req.url, options.signal));
        options.signal?.addEventListener('abort', onAbort, { once: true });
        capped.once('close', () => options.signal?.removeEventListener('abort', onAbort));
        // A reader that stops early (destroys the body) closes the connection too, instead of
        // leaving the rest of the answer unread on a paused socket.
        capped.on('close', () => {
          if (!res.complete) res.destroy();
        });
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          res.destroy();
          return reject(
            new HttpError(
              'too_large',
              `the answer is ${declared} bytes, over the ${maxBytes}-byte cap`,
              req.url,
            ),
          );
        }
        res.pipe(capped);
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        const text = async () => {
          const chunks: Buffer[] = [];
          for await (const chunk of capped) chunks.push(chunk as Buffer);
          return Buffer.concat(chunks).toString('utf8');
        };
        resolve({
          status: res.statusCode ?? 0,
          headers: flat,
          url: req.url,
          body: capped,
          text,
          json: async () => {
            const body = await text();
            // A platform's answers nest a dozen levels; far deeper is hostile, and would hold
            // the event loop in JSON.parse.
            if (jsonNestsDeeperThan(body, MAX_JSON_DEPTH))
              throw new HttpError(
                'bad_json',
                `the answer nests deeper than ${MAX_JSON_DEPTH} levels`,
                req.url,
              );
            try {
              return JSON.parse(body) as unknown;
            } catch (err) {
              throw new HttpError(
                'bad_json',
                `the answer is not JSON: ${(err as Error).message}`,
                req.url,
              );
            }
          },
          discard: () => {
            res.resume();
            capped.resume();
          },
        });
      });
      const body = req.body;
      if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) {
        request.end(body);
        return;
      }
      // A streamed body is opened anew for each attempt; a read error fails this attempt.
      const source = body.open();
      source.on('error', (err) => request.destroy(err));
      request.on('close', () => source.destroy());
      source.pipe(request);
    });
  }

  return { request };
}

function lengthOf(body: string | Buffer | StreamBody): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.length;
}

/** Statuses that redirect (304 Not Modified is a 3xx that does not). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Request headers that carry credentials: dropped on a redirect to another origin. */
const SENSITIVE = /^(authorization|proxy-authorization|cookie)$|token|secret|api-?key|signature/i;

function toHttpError(err: NodeJS.ErrnoException, url: string, signal?: AbortSignal): HttpError {
  if (err instanceof HttpError) return err;
  if (err.name === 'AbortError' || signal?.aborted) {
    // A reason given in words (a run's deadline) says why; a bare abort says it stopped.
    const reason: unknown = signal?.reason;
    const words =
      reason instanceof Error && reason.name !== 'AbortError' && reason.name !== 'TimeoutError'
        ? reason.message
        : 'stopped while the request ran';
    return new HttpError('aborted', words, url);
  }
  if (err.code === 'ETARGETREFUSED') return new HttpError('refused', err.message, url);
  const code = err.code ? ` (${err.code})` : '';
  return new HttpError('network', `${err.message}${code}`, url);
}

/** Passes bytes through until `max`, then fails with HttpError `too_large`. */
class SizeCap extends Transform {
  private seen = 0;
  constructor(
    private readonly max: number,
    private readonly url: string,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.max)
      return done(
        new HttpError('too_large', `the answer is over the ${this.max}-byte cap`, this.url),
      );
    done(null, chunk);
  }
}
