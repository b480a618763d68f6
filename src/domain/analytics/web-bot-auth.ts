/**
 * Web Bot Auth: a browsing agent names itself with `Signature-Agent` (the origin that
 * publishes its keys) and signs the request with an HTTP message signature (RFC 9421, tag
 * `web-bot-auth`). The `web-bot-auth` package checks the signature; this module finds the key.
 *
 * What is verified: the `Signature` / `Signature-Input` pair parses, its tag is `web-bot-auth`,
 * `created` is not in the future and `expires` not past (the package, against the system
 * clock), the signature over the covered components (`@authority`, and `signature-agent`,
 * which must be covered whenever the header is sent) holds for the key whose JWK thumbprint is
 * the signature's `keyid`, and that key is one the Signature-Agent's origin publishes at
 * `/.well-known/http-message-signatures-directory` (or one configured as trusted).
 *
 * What is not: the directory response's own signature (the directory is trusted as served over
 * HTTPS by the origin the header names); nonce reuse (replays inside the validity window are
 * not detected: analytics only needs to know who signed, not to stop a replay); that the
 * operator is who it says it is beyond owning that origin. Directories are fetched through the
 * guarded HTTP client (SSRF guard, size and time caps), cached per origin, failures included
 * for a shorter time, so a flood of signed requests costs one fetch per origin.
 */
import type { JsonWebKey } from 'node:crypto';
import { jwkToKeyID, helpers, verify, type VerificationParams } from 'web-bot-auth';
import { verifierFromJWK } from 'web-bot-auth/crypto';
import { createHttpClient, type HttpClient } from '../../net/http-client.js';
import { signatureAgentUrl } from './agents.js';

export const DIRECTORY_PATH = '/.well-known/http-message-signatures-directory';

export interface SignedRequest {
  method: string;
  /** The request target as received (`/v1/index.json`) or an absolute URL. */
  url: string;
  /** Lower- or mixed-case names; a repeated header as an array. */
  headers: Record<string, string | string[] | undefined>;
  /** The scheme the client used, when `url` is a path (default https). */
  protocol?: 'http' | 'https';
}

export interface WebBotAuthResult {
  verified: boolean;
  /** The key that signed, when verified. */
  keyid?: string;
  /** Why not, in words (no signature, unknown key, fetch failed, bad signature, ...). */
  reason?: string;
}

export interface WebBotAuthOptions {
  /** Keys trusted for any Signature-Agent, without fetching (JWKs, public parts). */
  keys?: JsonWebKey[];
  /** Fetches directories; null never fetches (only `keys` are used). */
  http?: HttpClient | null;
  /** Allow directories on private addresses (tests, a private network); default false. */
  allowPrivate?: boolean;
  /** Longest wait for a directory (default 3 s). */
  timeoutMs?: number;
  /** How long a fetched directory is trusted (default 1 hour). */
  cacheMs?: number;
  /** How long a failed fetch is remembered (default 5 minutes). */
  failureCacheMs?: number;
  /** The clock of the cache (not of the signature's validity: the package reads the system's). */
  now?: () => number;
}

interface CachedDirectory {
  until: number;
  keys: Promise<Map<string, JsonWebKey> | string>;
}

const MAX_DIRECTORY_BYTES = 64 * 1024;
const MAX_CACHED = 1000;

async function keyIds(keys: unknown[]): Promise<Map<string, JsonWebKey>> {
  const out = new Map<string, JsonWebKey>();
  for (const key of keys) {
    if (!key || typeof key !== 'object') continue;
    const jwk = key as JsonWebKey;
    try {
      out.set(await jwkToKeyID(jwk, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE), jwk);
    } catch {
      // A key the thumbprint cannot be computed for cannot be named by a signature either.
    }
  }
  return out;
}

function header(req: SignedRequest, name: string): string | undefined {
  for (const [k, v] of Object.entries(req.headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(', ') : v;
  }
  return undefined;
}

/** A verifier with its own directory cache; the server keeps one for its life. */
export function createWebBotAuthVerifier(options: WebBotAuthOptions = {}) {
  const now = options.now ?? Date.now;
  const http =
    options.http === undefined
      ? createHttpClient({ allowPrivate: options.allowPrivate ?? false })
      : options.http;
  const timeoutMs = options.timeoutMs ?? 3000;
  const cacheMs = options.cacheMs ?? 3_600_000;
  const failureCacheMs = options.failureCacheMs ?? 300_000;
  const configured = keyIds(options.keys ?? []);
  const cache = new Map<string, CachedDirectory>();

  const fetchDirectory = async (origin: string): Promise<Map<string, JsonWebKey> | string> => {
    if (!http) return 'no directory fetching configured';
    try {
      const res = await http.request({
        url: `${origin}${DIRECTORY_PATH}`,
        timeoutMs,
        maxBytes: MAX_DIRECTORY_BYTES,
        retry: false,
        maxRedirects: 2,
        headers: { accept: 'application/http-message-signatures-directory+json' },
      });
      if (res.status !== 200) {
        res.discard();
        return `directory answered HTTP ${res.status}`;
      }
      const body = (await res.json()) as { keys?: unknown };
      if (!body || !Array.isArray(body.keys)) return 'directory has no keys array';
      return await keyIds(body.keys);
    } catch (err) {
      return `directory could not be fetched: ${(err as Error).message}`;
    }
  };

  const directory = (origin: string): Promise<Map<string, JsonWebKey> | string> => {
    const t = now();
    const hit = cache.get(origin);
    if (hit && hit.until > t) return hit.keys;
    if (cache.size >= MAX_CACHED) cache.clear();
    const entry: CachedDirectory = { until: t + cacheMs, keys: fetchDirectory(origin) };
    cache.set(origin, entry);
    void entry.keys.then((keys) => {
      if (typeof keys === 'string') entry.until = now() + failureCacheMs;
    });
    return entry.keys;
  };

  return {
    async verify(req: SignedRequest): Promise<WebBotAuthResult> {
      const input = header(req, 'signature-input');
      if (!input || !header(req, 'signature')) return { verified: false, reason: 'not signed' };
      const agentHeader = header(req, 'signature-agent');
      if (agentHeader && !/"signature-agent"/i.test(input))
        return { verified: false, reason: 'signature-agent is sent but not signed' };
      const agentUrl = agentHeader ? signatureAgentUrl(agentHeader) : null;
      if (agentHeader && !agentUrl)
        return { verified: false, reason: 'signature-agent names no URL' };

      const trusted = await configured;
      let keys: Map<string, JsonWebKey> | string = trusted;
      const keyid = /;\s*keyid="([^"]+)"/.exec(input)?.[1];
      if (!keyid) return { verified: false, reason: 'keyid is missing' };
      if (!trusted.has(keyid)) {
        if (!agentUrl) return { verified: false, reason: 'unknown key and no signature-agent' };
        if (agentUrl.protocol !== 'https:' && !options.allowPrivate)
          return { verified: false, reason: 'signature-agent must be https' };
        keys = await directory(agentUrl.origin);
        if (typeof keys === 'string') return { verified: false, reason: keys };
      }
      const jwk = keys.get(keyid);
      if (!jwk) return { verified: false, reason: 'the directory does not publish this key' };
      try {
        const check = await verifierFromJWK(jwk);
        await verify(
          {
            method: req.method,
            url: req.url,
            protocol: req.protocol ?? 'https',
            headers: req.headers as unknown as Headers,
          },
          (data: string, signature: Uint8Array, params: VerificationParams) => {
            if (params.keyid !== keyid) throw new Error('keyid mismatch');
            return check(data, signature, params);
          },
        );
        return { verified: true, keyid };
      } catch (err) {
        return { verified: false, reason: `signature does not hold: ${(err as Error).message}` };
      }
    },
  };
}

let shared: ReturnType<typeof createWebBotAuthVerifier> | undefined;

/**
 * Whether a request's Web Bot Auth signature holds (see the top of this file for what that
 * covers). Uses one process-wide verifier (public directories only); pass options for another.
 */
export function verifyWebBotAuth(
  request: SignedRequest,
  options?: WebBotAuthOptions,
): Promise<WebBotAuthResult> {
  const verifier = options
    ? createWebBotAuthVerifier(options)
    : (shared ??= createWebBotAuthVerifier());
  return verifier.verify(request);
}
