import type http from 'node:http';
import { CACHE_NONE, COMMON_HEADERS } from '../../domain/discovery/policy.js';
import {
  runCatalogOperation,
  type CatalogCall,
  type CatalogDeps,
  type CatalogOperation,
} from '../../domain/ucp/catalog.js';
import { MCP_PATH, UCP_VERSION } from '../../domain/ucp/profile.js';
import { UcpRequestError } from '../../domain/ucp/schemas.js';
import {
  answerMcp,
  isJsonContentType,
  jsonRpcError,
  requestIdOf,
  TRANSPORT_ERROR,
  type JsonRpcId,
} from './mcp.js';

/**
 * The UCP catalog's REST binding on the discovery server (vendor/ucp/spec/catalog-rest.md):
 * `POST /ucp/catalog/search`, `/ucp/catalog/lookup`, `/ucp/catalog/product`. Business outcomes
 * (nothing found, a product that is not there) are 200 with the UCP envelope; a request that
 * is not one (malformed JSON, a schema violation, a changed cursor, too many ids) is 400 with
 * UCP's error response naming the field.
 */

/** Largest request body read (as the platform API's). */
export const MAX_BODY_BYTES = 1024 * 1024;

export const CATALOG_ROUTES = {
  '/ucp/catalog/search': 'search',
  '/ucp/catalog/lookup': 'lookup',
  '/ucp/catalog/product': 'product',
} as const;

export type UcpRoute = CatalogOperation | 'mcp';

/** The catalog operation (or the MCP endpoint) a path names, if any. */
export function ucpRouteOf(urlPath: string): UcpRoute | undefined {
  if (urlPath === MCP_PATH) return 'mcp';
  return Object.hasOwn(CATALOG_ROUTES, urlPath)
    ? CATALOG_ROUTES[urlPath as keyof typeof CATALOG_ROUTES]
    : undefined;
}

/** UCP's error response (types/error_response.json) for a request refused. */
export function ucpErrorBody(code: string, content: string): object {
  return {
    ucp: { version: UCP_VERSION, status: 'error' },
    messages: [{ type: 'error', code, content, severity: 'recoverable' }],
  };
}

export class BodyTooLargeError extends Error {}

/** Reads a request body of at most MAX_BODY_BYTES. */
export function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) {
      req.resume();
      reject(new BodyTooLargeError());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Sends a JSON answer of the catalog; returns the body bytes. */
export function sendJson(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  body: object | undefined,
  limitHeaders: string[],
): number {
  const text = body === undefined ? '' : `${JSON.stringify(body)}\n`;
  const bytes = Buffer.byteLength(text);
  res.writeHead(status, [
    ...COMMON_HEADERS.flat(),
    ...(body === undefined ? [] : ['Content-Type', 'application/json; charset=utf-8']),
    'Content-Length',
    String(bytes),
    'Cache-Control',
    CACHE_NONE,
    ...limitHeaders,
  ]);
  res.end(req.method === 'HEAD' ? undefined : text);
  return req.method === 'HEAD' ? 0 : bytes;
}

/** The answer to a UCP REST call: status and body (never throws for bad input). */
export async function answerCatalogRest(
  deps: CatalogDeps,
  operation: CatalogOperation,
  raw: Buffer,
): Promise<{ status: number; body: object; call?: CatalogCall }> {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return { status: 400, body: ucpErrorBody('invalid_request', 'the body is not valid JSON') };
  }
  try {
    const { response, call } = await runCatalogOperation(deps, operation, body);
    return { status: 200, body: response, call };
  } catch (err) {
    if (!(err instanceof UcpRequestError)) throw err;
    return { status: 400, body: ucpErrorBody(err.code, err.message) };
  }
}

/** The answer to a CORS preflight of the catalog (a POST with a JSON body and UCP-Agent). */
const CATALOG_PREFLIGHT = [
  'Access-Control-Allow-Methods',
  'POST, OPTIONS',
  'Access-Control-Allow-Headers',
  'Content-Type, UCP-Agent, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID',
  'Access-Control-Max-Age',
  '86400',
];

/**
 * Serves one UCP call (REST or MCP); resolves to its status, body bytes and, for a catalog
 * call, what it did (for analytics). Bad input never rejects; a failure of ours does (the
 * server answers it 500 without internals and logs it).
 */
export async function serveUcp(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: UcpRoute,
  deps: CatalogDeps,
  limitHeaders: string[],
): Promise<{ status: number; bytes: number; call?: CatalogCall; agentProfile?: string }> {
  if (req.method === 'OPTIONS') {
    res.writeHead(204, [
      ...COMMON_HEADERS.flat(),
      ...CATALOG_PREFLIGHT,
      'Cache-Control',
      CACHE_NONE,
      ...limitHeaders,
    ]);
    res.end();
    return { status: 204, bytes: 0 };
  }
  if (req.method !== 'POST') {
    // MCP: no SSE stream to GET, no session to DELETE (streamable HTTP allows the 405).
    res.setHeader('Allow', 'POST, OPTIONS');
    const body =
      route === 'mcp'
        ? jsonRpcError(null, TRANSPORT_ERROR, 'Method not allowed: use POST')
        : ucpErrorBody('method_not_allowed', 'method: use POST');
    return { status: 405, bytes: sendJson(req, res, 405, body, limitHeaders) };
  }
  let raw: Buffer;
  try {
    raw = await readBody(req);
  } catch (err) {
    if (!(err instanceof BodyTooLargeError)) throw err;
    const content = `the body is over ${MAX_BODY_BYTES} bytes`;
    const body =
      route === 'mcp'
        ? jsonRpcError(null, TRANSPORT_ERROR, `Payload too large: ${content}`)
        : ucpErrorBody('request_too_large', content);
    res.setHeader('Connection', 'close');
    return { status: 413, bytes: sendJson(req, res, 413, body, limitHeaders) };
  }
  if (route === 'mcp' && !isJsonContentType(req.headers['content-type'])) {
    const body = jsonRpcError(
      requestIdOf(raw),
      TRANSPORT_ERROR,
      'Unsupported Media Type: Content-Type must be application/json',
    );
    return { status: 415, bytes: sendJson(req, res, 415, body, limitHeaders) };
  }
  const answer =
    route === 'mcp' ? await answerMcp(deps, raw) : await answerCatalogRest(deps, route, raw);
  const profile = route === 'mcp' ? (answer as { agentProfile?: string }).agentProfile : undefined;
  return {
    status: answer.status,
    bytes: sendJson(req, res, answer.status, answer.body, limitHeaders),
    ...(answer.call ? { call: answer.call } : {}),
    ...(profile ? { agentProfile: profile } : {}),
  };
}

/**
 * Refuses an MCP call before its handler (the rate limit) with a JSON-RPC
 * error, as an MCP client reads one: the request's id when its body names one (the body is
 * read, at most MAX_BODY_BYTES of it), else null; the status and headers the refusal takes.
 */
export async function refuseMcp(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  refusal: { status: number; code: number; message: string; headers: string[] },
): Promise<{ status: number; bytes: number }> {
  let id: JsonRpcId = null;
  try {
    id = requestIdOf(await readBody(req));
  } catch (err) {
    if (!(err instanceof BodyTooLargeError)) throw err;
    res.setHeader('Connection', 'close');
  }
  const body = jsonRpcError(id, refusal.code, refusal.message);
  return {
    status: refusal.status,
    bytes: sendJson(req, res, refusal.status, body, refusal.headers),
  };
}
