import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { parseRetryAfter } from '../../net/retry-after.js';
import { checkAddress, guardedLookup, hostOf, TargetRefusedError } from '../../net/target-guard.js';

/** How much of a receiver's answer the delivery log keeps. */
export const RESPONSE_EXCERPT_BYTES = 1024;
export interface PostRequest {
  url: string;
  body: string;
  /** The request's headers; Content-Length is set on this object. */
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
  /** Keep-alive agents of the endpoint's lane; a one-off request opens its own connection. */
  agents?: { http: http.Agent; https: https.Agent } | undefined;
  /** Aborted at shutdown: the attempt is dropped, not recorded, and sent again later. */
  signal?: AbortSignal | undefined;
}

export interface PostOutcome {
  /** 2xx. */
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  /** Why it failed, in words for the delivery log; null on success. */
  error: string | null;
  /** Seconds the receiver asked us to wait, on 429 and 503. */
  retryAfterSeconds: number | undefined;
  responseBody: string | null;
  /** Stopped by shutdown before an answer: not an attempt. */
  aborted: boolean;
}

/** Creates the keep-alive agents of one endpoint (one connection: deliveries go in order). */
export function createEndpointAgents(allowPrivate: boolean) {
  const options = { keepAlive: true, maxSockets: 1, lookup: guardedLookup({ allowPrivate }) };
  return { http: new http.Agent(options), https: new https.Agent(options) };
}

function describeError(err: NodeJS.ErrnoException, timeoutMs: number): string {
  if (err instanceof TargetRefusedError) return err.message;
  switch (err.code) {
    case 'ETIMEDOUT_ATTEMPT':
      return `timed out after ${timeoutMs / 1000} s without a complete answer`;
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED)';
    case 'ECONNRESET':
      return 'connection reset by the receiver (ECONNRESET)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host name did not resolve (${err.code})`;
    case 'ETARGETREFUSED':
      return err.message;
    default:
      return err.code ? `${err.message} (${err.code})` : err.message;
  }
}

/** A target URL as a request takes it: parsed and checked once, not on every attempt. */
interface Target {
  isHttps: boolean;
  options: http.RequestOptions;
}

const targets = new Map<string, Target>();
const lookups = {
  private: guardedLookup({ allowPrivate: true }),
  public: guardedLookup({ allowPrivate: false }),
};

/**
 * The parsed target of a URL, its literal address checked (a host name's addresses are
 * checked on every connection by the lookup hook). Throws as `new URL` and checkAddress do.
 */
function targetOf(rawUrl: string, allowPrivate: boolean): Target {
  const key = `${allowPrivate ? 'p' : 'g'}${rawUrl}`;
  let target = targets.get(key);
  if (!target) {
    const url = new URL(rawUrl);
    checkAddress(hostOf(url), { allowPrivate });
    target = { isHttps: url.protocol === 'https:', options: urlToHttpOptions(url) };
    if (targets.size >= 1_000) targets.clear();
    targets.set(key, target);
  }
  return target;
}

/**
 * POSTs one delivery and reports what happened. Never throws: every failure (refused target,
 * DNS, connection, timeout over the whole exchange, non-2xx) comes back as an outcome.
 * Redirects are not followed: a 3xx is a failed attempt.
 */
export async function postDelivery(req: PostRequest): Promise<PostOutcome> {
  const started = performance.now();
  let outcome = await postOnce(req, started);
  // A kept-alive connection the receiver closed just as we reused it: send once more at once
  // on a new connection (Node's advice for keep-alive races); this is not a second attempt.
  if (outcome.reusedSocketReset) outcome = await postOnce(req, started);
  const { reusedSocketReset: _ignored, ...rest } = outcome;
  return rest;
}

function postOnce(
  req: PostRequest,
  started: number,
): Promise<PostOutcome & { reusedSocketReset?: boolean }> {
  return new Promise((resolve) => {
    let settled = false;
    const cleanups: (() => void)[] = [];
    const finish = (outcome: Partial<PostOutcome> & { reusedSocketReset?: boolean }) => {
      if (settled) return;
      settled = true;
      for (const cleanup of cleanups) cleanup();
      resolve({
        ok: false,
        statusCode: null,
        error: null,
        retryAfterSeconds: undefined,
        responseBody: null,
        aborted: false,
        ...outcome,
        durationMs: Math.round(performance.now() - started),
      });
    };

    let target: Target;
    try {
      target = targetOf(req.url, req.allowPrivate);
    } catch (err) {
      return finish({ error: describeError(err as NodeJS.ErrnoException, req.timeoutMs) });
    }
    if (req.signal?.aborted) return finish({ aborted: true, error: 'stopped by shutdown' });

    const { isHttps } = target;
    const send = isHttps ? https.request : http.request;
    req.headers['Content-Length'] = String(Buffer.byteLength(req.body));
    const request = send(
      {
        ...target.options,
        method: 'POST',
        headers: req.headers,
        agent: req.agents ? (isHttps ? req.agents.https : req.agents.http) : false,
        lookup: req.allowPrivate ? lookups.private : lookups.public,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_EXCERPT_BYTES) {
            chunks.push(chunk);
            kept += chunk.length;
          }
        });
        res.on('error', (err: NodeJS.ErrnoException) =>
          finish({ statusCode: res.statusCode ?? null, error: describeError(err, req.timeoutMs) }),
        );
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          const retryAfter = res.headers['retry-after'];
          finish({
            ok,
            statusCode: status,
            error: ok
              ? null
              : status >= 300 && status < 400
                ? `HTTP ${status}: redirects are not followed`
                : `HTTP ${status}`,
            retryAfterSeconds:
              status === 429 || status === 503
                ? parseRetryAfter(
                    Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
                    new Date(),
                  )
                : undefined,
            responseBody: chunks.length
              ? Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8')
              : null,
          });
        });
      },
    );
    // The timeout covers the whole exchange: connecting, sending, and reading the answer.
    const timer = setTimeout(() => {
      const err = Object.assign(new Error('attempt timed out'), { code: 'ETIMEDOUT_ATTEMPT' });
      request.destroy(err);
      finish({ error: describeError(err, req.timeoutMs) });
    }, req.timeoutMs);
    const onAbort = () => {
      request.destroy();
      finish({ aborted: true, error: 'stopped by shutdown' });
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    cleanups.push(
      () => clearTimeout(timer),
      () => req.signal?.removeEventListener('abort', onAbort),
    );
    request.on('error', (err: NodeJS.ErrnoException) => {
      const reusedSocketReset = err.code === 'ECONNRESET' && request.reusedSocket;
      finish({ error: describeError(err, req.timeoutMs), reusedSocketReset });
    });
    request.end(req.body);
  });
}
