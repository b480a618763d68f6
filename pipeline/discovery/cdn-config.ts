/**
 * The registry's serving rules for servers other than `serve`: `_headers` (Netlify,
 * Cloudflare Pages), `_redirects` (the `/v1/brands/<slug>` address) and an nginx server.
 * All three come from src/domain/discovery/policy.ts, like the embedded server's answers.
 */
import {
  ALLOWED_METHODS,
  CACHE_CONTENT,
  CACHE_INDEX,
  CACHE_NONE,
  COMMON_HEADERS,
  CONTENT_TYPES,
  PREFLIGHT_HEADERS,
  ROOT_FILES,
  discoveryError,
  rateLimitDetails,
  type RateWindow,
} from '../../src/domain/discovery/policy.js';
import { SLUG_PATTERN } from '../../src/domain/discovery/slug.js';
import { BUCKET_SIBLINGS } from '../../src/publish/manifest.js';
import { PROFILE_FILE } from '../../src/domain/ucp/profile.js';

/** `_headers`: one rule per path family, so no header is set twice (CDNs join repeats). */
export function renderHeadersFile(): string {
  const common = COMMON_HEADERS.map(([k, v]) => `  ${k}: ${v}`).join('\n');
  const rule = (pattern: string, headers: [string, string][]) =>
    `${pattern}\n${common}\n${headers.map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`;
  return [
    '# Written by the agentshelf pipeline (Netlify / Cloudflare Pages): the headers `serve` gives.',
    '# Per-IP limits are not expressible here; set them in the CDN (60/min, 1,000/h, 10,000/day).',
    rule('/', [['Cache-Control', CACHE_CONTENT]]),
    rule('/index.html', [['Cache-Control', CACHE_CONTENT]]),
    rule('/v1/index.json', [['Cache-Control', CACHE_INDEX]]),
    rule('/v1/brands/*', [['Cache-Control', CACHE_CONTENT]]),
    rule('/v1/feeds/:brand/products.json', [
      ['Cache-Control', CACHE_CONTENT],
      ['Content-Type', CONTENT_TYPES['.json']!],
    ]),
    rule('/v1/feeds/:brand/products.ndjson', [
      ['Cache-Control', CACHE_CONTENT],
      ['Content-Type', CONTENT_TYPES['.ndjson']!],
    ]),
    ...Object.entries(ROOT_FILES).map(([file, { type, cache }]) =>
      rule(`/${file}`, [
        ['Cache-Control', cache],
        ['Content-Type', type],
      ]),
    ),
  ].join('\n');
}

/**
 * `_redirects`: `/v1/brands/<slug>` answers with the brand's JSON (a 200 rewrite). One exact
 * rule per brand: a `:slug` placeholder would also catch `/v1/brands/<slug>.json` on
 * Cloudflare Pages, which applies rules even where a file exists.
 */
export function renderRedirectsFile(slugs: string[]): string {
  return [
    '# Written by the agentshelf pipeline: /v1/brands/<slug> serves the brand JSON.',
    ...[...slugs].sort().map((s) => `/v1/brands/${s} /v1/brands/${s}.json 200`),
    '',
  ].join('\n');
}

export interface NginxSettings {
  publicDir: string;
  host: string;
  port: number;
  windows: RateWindow[];
  trustProxy: boolean;
}

function nginxString(value: string): string {
  if (/[$\n\r]/.test(value)) {
    throw new Error(`cannot write ${JSON.stringify(value)} into an nginx config ($ or newline)`);
  }
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

function luaString(value: string): string {
  return `[==[${value}]==]`;
}

/**
 * An nginx config for the `http {}` block: serves PUBLIC_DIR with the same paths, headers,
 * precompressed siblings, 304s, JSON errors and per-IP limits (exact fixed windows, like
 * `serve`) as the embedded discovery server. Needs Debian's libnginx-mod-http-lua and
 * libnginx-mod-http-brotli-static (loaded by /etc/nginx/modules-enabled on Debian).
 */
export function renderNginxConfig(s: NginxSettings): string {
  const host = s.host.includes(':') ? `[${s.host}]` : s.host;
  const error = (kind: Parameters<typeof discoveryError>[0], details: string) =>
    luaString(discoveryError(kind, details).body);
  const windows = s.windows
    .map(
      (w) =>
        `    { seconds = ${w.seconds}, max = ${w.max}, body = ${luaString(discoveryError('rate_limited', rateLimitDetails(w)).body)} },`,
    )
    .join('\n');
  const common = COMMON_HEADERS.map(([k, v]) => `    add_header ${k} ${nginxString(v)} always;`);
  const preflight = PREFLIGHT_HEADERS.map(
    ([k, v]) => `      ngx.header[ ${luaString(k)} ] = ${luaString(v)}`,
  ).join('\n');
  // Limits run in the access phase, before try_files and content; `return` would run earlier
  // (rewrite phase) and skip them, so refusals go through Lua's content phase instead.
  const guarded = (body: string) =>
    `access_by_lua_block { agentshelf_discovery_access() }\n      ${body}`;
  return `# agentshelf discovery registry for nginx, written by the pipeline: include it in http {}.
# It answers like \`agentshelf serve\` on FEEDS_PORT: same paths, headers, 304s, JSON errors and
# per-IP limits. Needs the Lua and brotli_static modules (Debian: libnginx-mod-http-lua and
# libnginx-mod-http-brotli-static). Access logs in the combined format feed
# \`agentshelf analytics import\`.

lua_shared_dict agentshelf_discovery_limits 16m;

init_by_lua_block {
  local windows = {
${windows}
  }
  local NOT_FOUND = ${error('not_found', 'path: not found')}
  local METHOD = ${error('method_not_allowed', `method: use ${ALLOWED_METHODS}`)}

  local function send(status, body)
    ngx.status = status
    ngx.header["Content-Type"] = ${luaString(CONTENT_TYPES['.json']!)}
    ngx.header["Cache-Control"] = ${luaString(CACHE_NONE)}
    ngx.print(body)
    return ngx.exit(ngx.HTTP_OK)
  end

  function agentshelf_discovery_not_found()
    return send(404, NOT_FOUND)
  end

  -- Fixed windows aligned to the clock, counted per client address; refused requests are
  -- not counted. X-RateLimit-Remaining is the least left over the windows.
  function agentshelf_discovery_access()
    if #windows > 0 then
      local limits = ngx.shared.agentshelf_discovery_limits
      local ip = ngx.var.remote_addr
      local now = ngx.now()
      local keys, remaining, wait, full = {}, math.huge, 0, nil
      for i, w in ipairs(windows) do
        local start = math.floor(now / w.seconds) * w.seconds
        keys[i] = ip .. "|" .. w.seconds .. "|" .. start
        local used = limits:get(keys[i]) or 0
        if used >= w.max and start + w.seconds - now > wait then
          wait, full = start + w.seconds - now, w
        end
        if w.max - used < remaining then remaining = w.max - used end
      end
      if full then
        ngx.header["Retry-After"] = tostring(math.max(1, math.ceil(wait)))
        ngx.header["X-RateLimit-Remaining"] = "0"
        return send(429, full.body)
      end
      for i, w in ipairs(windows) do
        limits:incr(keys[i], 1, 0, w.seconds + 1)
      end
      ngx.header["X-RateLimit-Remaining"] = tostring(remaining - 1)
    end
    local method = ngx.req.get_method()
    if method == "OPTIONS" then
${preflight}
      ngx.header["Cache-Control"] = ${luaString(CACHE_NONE)}
      return ngx.exit(204)
    end
    if method ~= "GET" and method ~= "HEAD" then
      ngx.header["Allow"] = ${luaString(ALLOWED_METHODS)}
      return send(405, METHOD)
    end
  end
}

map $uri $agentshelf_discovery_cache {
  default ${nginxString(CACHE_CONTENT)};
  /v1/index.json ${nginxString(CACHE_INDEX)};
${Object.entries(ROOT_FILES)
  .map(([file, { cache }]) => `  /${file} ${nginxString(cache)};`)
  .join('\n')}
}
map $status $agentshelf_discovery_cache_control {
  200 $agentshelf_discovery_cache;
  304 $agentshelf_discovery_cache;
  default "";
}
map $status $agentshelf_discovery_vary {
  200 "Accept-Encoding";
  304 "Accept-Encoding";
  default "";
}

server {
    listen ${host}:${s.port};
    server_name _;
    server_tokens off;
    root ${nginxString(s.publicDir)};
${s.trustProxy ? '    set_real_ip_from 127.0.0.1;\n    set_real_ip_from ::1;\n    real_ip_header X-Forwarded-For;\n' : ''}
    types {
        application/json json;
        application/x-ndjson ndjson;
        text/html html;
        text/plain txt;
        application/xml xml;
    }
    default_type application/octet-stream;
    charset utf-8;
    charset_types application/json application/x-ndjson text/plain application/xml;
    gzip off;
    gzip_static on;
    brotli_static on;
    etag on;
    sendfile on;
    tcp_nopush on;

${common.join('\n')}
    add_header Cache-Control $agentshelf_discovery_cache_control always;
    add_header Vary $agentshelf_discovery_vary always;

    error_page 404 = @agentshelf_discovery_not_found;

    location = / {
      ${guarded('try_files /index.html =404;')}
    }
    location ~ "^/v1/brands/(${SLUG_PATTERN.source.slice(1, -1)})$" {
      ${guarded('try_files /v1/brands/$1.json =404;')}
    }
    location = /${PROFILE_FILE} {
      default_type application/json;
      ${guarded('try_files $uri =404;')}
    }
    location ~ "^/(${Object.keys(ROOT_FILES)
      .filter((f) => f !== PROFILE_FILE)
      .map((f) => f.replaceAll('.', '\\.'))
      .join('|')})$" {
      ${guarded('try_files $uri =404;')}
    }
    location ~ "/[._]" {
      ${guarded('content_by_lua_block { agentshelf_discovery_not_found() }')}
    }
    location ~ "^/v1/.*/$" {
      ${guarded('try_files ${uri}index.html =404;')}
    }
    location ~ "^/v1/.*\\.(json|ndjson|html)$" {
      ${guarded('try_files $uri =404;')}
    }
    location / {
      ${guarded('content_by_lua_block { agentshelf_discovery_not_found() }')}
    }
    location @agentshelf_discovery_not_found {
      content_by_lua_block { agentshelf_discovery_not_found() }
    }
}
`;
}

/** The headers an object store cannot hold on an object: the CDN in front of the bucket adds them. */
function edgeHeaders(): [string, string][] {
  return [...COMMON_HEADERS, ['Vary', 'Accept-Encoding']];
}

/**
 * `cdn/cloudfront-function.js`: a CloudFront Function (viewer request, cloudfront-js-2.0) for
 * a bucket published with compressed siblings (PUBLISH_TARGET encodings=siblings): maps
 * `/v1/brands/<slug>` to its JSON and a directory to its index.html, then picks a feed's `.br`
 * or `.gz` object by Accept-Encoding (only the feeds have siblings in the bucket: see
 * BUCKET_SIBLINGS; CloudFront compresses the rest itself). The headers objects cannot carry
 * go in a response headers policy, listed at the top. The purge invalidates every object a
 * URL may map to (src/publish/cdn.ts, cloudfrontPaths).
 */
export function renderCloudFrontFunction(): string {
  const headers = edgeHeaders()
    .map(([k, v]) => `//   ${k}: ${v}`)
    .join('\n');
  return `// Written by the agentshelf pipeline: a CloudFront Function (viewer request, runtime
// cloudfront-js-2.0) for the registry published to S3 with .gz and .br siblings of the feeds.
// Add these headers with a response headers policy (objects cannot hold them):
${headers}
// and Content-Encoding comes from each object's metadata. In the cache policy turn on Gzip and
// Brotli compression support (Accept-Encoding, normalised, joins the cache key; this function
// reads the viewer's header), and on the behaviour "Compress objects automatically": CloudFront
// compresses the objects uploaded without siblings (all under 10 MB); the feeds, which can be
// larger, have precompressed .br and .gz objects, picked here.
var COMPRESSIBLE = ${String(BUCKET_SIBLINGS)};
var BRAND = ${String(new RegExp(`^/v1/brands/(${SLUG_PATTERN.source.replace(/^\^|\$$/g, '')})$`))};

function handler(event) {
  var request = event.request;
  var uri = request.uri;
  if (uri.endsWith('/')) uri += 'index.html';
  else if (BRAND.test(uri)) uri += '.json';
  var header = request.headers['accept-encoding'];
  var accepted = header ? header.value : '';
  if (COMPRESSIBLE.test(uri)) {
    if (/(^|[\\s,])br($|[\\s,;])/.test(accepted)) uri += '.br';
    else if (/(^|[\\s,])gzip($|[\\s,;])/.test(accepted)) uri += '.gz';
  }
  request.uri = uri;
  return request;
}
`;
}

/**
 * `cdn/cloudflare-rules.json`: the body of Cloudflare's Rulesets API for the response header
 * transform phase (PUT zones/ZONE/rulesets/phases/http_response_headers_transform/entrypoint):
 * one rule setting on every registry answer the headers the bucket's objects cannot hold.
 * Cloudflare compresses by itself, so R2 and B2 targets get plain objects.
 */
export function renderCloudflareRules(): string {
  const headers = Object.fromEntries(
    COMMON_HEADERS.map(([k, v]) => [k, { operation: 'set', value: v }]),
  );
  return `${JSON.stringify(
    {
      description: 'agentshelf discovery registry: the headers agentshelf serve gives',
      rules: [
        {
          description: 'ACP version, CORS and nosniff on the registry',
          expression:
            '(http.request.uri.path eq "/" or starts_with(http.request.uri.path, "/v1/"))',
          action: 'rewrite',
          action_parameters: { headers },
          enabled: true,
        },
      ],
    },
    null,
    2,
  )}\n`;
}
