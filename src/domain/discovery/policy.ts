/**
 * What the published registry looks like on the wire: which headers each file carries, which
 * paths are served and what an error says (where files live: domain/discovery/layout.ts).
 * The embedded discovery server, the `_headers` file and the
 * nginx config are all built from this one module, so a CDN or nginx answers like `serve`.
 */
import { ACP_VERSION } from './acp.js';
import { SLUG_PATTERN } from './slug.js';
import { CACHE_PROFILE, PROFILE_FILE } from '../ucp/profile.js';

export const CONTENT_TYPES: Record<string, string> = {
  '.json': 'application/json; charset=utf-8',
  '.ndjson': 'application/x-ndjson; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

/** The index changes whenever any brand does: agents should look again soon. */
export const CACHE_INDEX = 'public, max-age=60, stale-while-revalidate=600';
/** Brands, feeds and pages: a few minutes fresh, then served stale while a cache refetches. */
export const CACHE_CONTENT = 'public, max-age=300, stale-while-revalidate=3600';
/** Errors and limit answers are about this moment only. */
export const CACHE_NONE = 'no-store';

/** Headers every discovery response carries, errors included. */
export const COMMON_HEADERS: [string, string][] = [
  ['X-ACP-Version', ACP_VERSION],
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Expose-Headers', 'ETag, Retry-After, X-ACP-Version, X-RateLimit-Remaining'],
  ['X-Content-Type-Options', 'nosniff'],
];

/** The answer to a CORS preflight (If-None-Match is not a safelisted request header). */
export const PREFLIGHT_HEADERS: [string, string][] = [
  ['Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS'],
  ['Access-Control-Allow-Headers', 'If-None-Match, If-Modified-Since, Accept-Encoding'],
  ['Access-Control-Max-Age', '86400'],
];

export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

export interface RateWindow {
  name: 'minute' | 'hour' | 'day';
  seconds: number;
  max: number;
}

/** CONTRACT part 4 per client IP; a max of 0 switches a window off. */
export function rateWindows(limits: { minute: number; hour: number; day: number }): RateWindow[] {
  const all: RateWindow[] = [
    { name: 'minute', seconds: 60, max: limits.minute },
    { name: 'hour', seconds: 3600, max: limits.hour },
    { name: 'day', seconds: 86_400, max: limits.day },
  ];
  return all.filter((w) => w.max > 0);
}

/**
 * The files agents look for at the root of the tree (issue 23), each with its type and
 * caching: the UCP business profile (UCP asks for `public` and a max-age of 60 s at least),
 * robots.txt, sitemap.xml, llms.txt. Nothing else outside /v1/ is served.
 */
export const ROOT_FILES: Readonly<Record<string, { type: string; cache: string }>> = {
  [PROFILE_FILE]: { type: 'application/json; charset=utf-8', cache: CACHE_PROFILE },
  'robots.txt': { type: 'text/plain; charset=utf-8', cache: CACHE_CONTENT },
  'sitemap.xml': { type: 'application/xml; charset=utf-8', cache: CACHE_CONTENT },
  'llms.txt': { type: 'text/plain; charset=utf-8', cache: CACHE_CONTENT },
};

const rootFile = (file: string) => (Object.hasOwn(ROOT_FILES, file) ? ROOT_FILES[file] : undefined);

export function cacheControlFor(file: string): string {
  const root = rootFile(file);
  if (root) return root.cache;
  return file === 'v1/index.json' ? CACHE_INDEX : CACHE_CONTENT;
}

export function contentTypeFor(file: string): string | undefined {
  const root = rootFile(file);
  if (root) return root.type;
  const dot = file.lastIndexOf('.');
  return dot < 0 ? undefined : CONTENT_TYPES[file.slice(dot)];
}

export type Resolution =
  | { file: string; brand: string | null }
  | { error: 'not_found' | 'bad_request'; brand: string | null };

/**
 * Maps a request path to a published file, relative to PUBLIC_DIR, or says why not.
 * `/` is the home page, the ROOT_FILES are themselves, `/v1/brands/<slug>` the brand's JSON, a trailing `/` a directory's
 * index.html. The path is decoded once; anything that could leave PUBLIC_DIR or reach a file
 * that is not part of the registry is refused: `.` and `..` segments, empty segments,
 * backslashes, NUL, hidden (`.x`) and underscore (`_headers`) names, and every extension
 * but .json, .ndjson and .html (so no `.gz` or `.br` sibling is fetched by name).
 */
export function resolvePublicPath(rawPath: string): Resolution {
  if (!rawPath.startsWith('/')) return { error: 'bad_request', brand: null };
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return { error: 'bad_request', brand: null };
  }
  const segments = decoded.split('/').slice(1);
  const brand = brandOfSegments(segments);
  if (decoded.includes('\0') || decoded.includes('\\')) return { error: 'not_found', brand };
  if (decoded === '/') return { file: 'index.html', brand };
  if (rootFile(decoded.slice(1))) return { file: decoded.slice(1), brand };
  // Only the registry is public: anything else PUBLIC_DIR may hold is not served.
  if (segments[0] !== 'v1') return { error: 'not_found', brand };
  const last = segments.length - 1;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (s === '' ? i !== last : s.startsWith('.') || s.startsWith('_')) {
      return { error: 'not_found', brand };
    }
  }
  let file: string;
  if (segments[last] === '') file = `${segments.slice(0, last).join('/')}/index.html`;
  else if (
    segments.length === 3 &&
    segments[0] === 'v1' &&
    segments[1] === 'brands' &&
    SLUG_PATTERN.test(segments[2]!)
  )
    file = `v1/brands/${segments[2]}.json`;
  else file = segments.join('/');
  if (!contentTypeFor(file)) return { error: 'not_found', brand };
  return { file, brand };
}

function brandOfSegments(segments: string[]): string | null {
  if (segments[0] !== 'v1' || (segments[1] !== 'brands' && segments[1] !== 'feeds')) return null;
  const name = segments[2]?.replace(/\.json$/, '');
  return name && SLUG_PATTERN.test(name) ? name : null;
}

export type DiscoveryErrorKind =
  'not_found' | 'bad_request' | 'method_not_allowed' | 'rate_limited' | 'internal';

const ERRORS: Record<DiscoveryErrorKind, { status: number; code: string; message: string }> = {
  not_found: {
    status: 404,
    code: 'not_found',
    message: 'Nothing is published at this path. The registry starts at /v1/index.json.',
  },
  bad_request: { status: 400, code: 'invalid_request', message: 'The request path is malformed.' },
  method_not_allowed: {
    status: 405,
    code: 'invalid_request',
    message: 'The discovery API is read-only: use GET or HEAD.',
  },
  rate_limited: {
    status: 429,
    code: 'rate_limit_exceeded',
    message: 'Too many requests from this address. Retry after the seconds in Retry-After.',
  },
  internal: { status: 500, code: 'internal_error', message: 'An unexpected error occurred.' },
};

/**
 * The discovery API's error answer: CONTRACT part 4, `{"error":{"code","message","details"}}`
 * with the codes of CONTRACT part 6 shape A. The only place its error bodies are written.
 */
export function discoveryError(
  kind: DiscoveryErrorKind,
  details: string,
): { status: number; body: string } {
  const e = ERRORS[kind];
  return {
    status: e.status,
    body: `${JSON.stringify({ error: { code: e.code, message: e.message, details } })}\n`,
  };
}

/** The `details` of a 429: which window is full. */
export function rateLimitDetails(window: RateWindow): string {
  return `at most ${window.max} requests a ${window.name} from one address`;
}
