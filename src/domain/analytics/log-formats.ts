/**
 * CDN access log lines -> AccessRecord, for `agentshelf analytics import`. Three formats, as
 * their makers document them:
 *
 * - nginx `combined` (what the generated nginx config writes):
 *   `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent
 *   "$http_referer" "$http_user_agent"`, with nginx's `\xHH` escapes in quoted fields.
 *   No request id: a re-import is recognised by a hash of the line.
 * - Cloudflare Logpush `http_requests`, one JSON object a line: EdgeStartTimestamp (RFC 3339
 *   string, unix seconds or unix nanoseconds, whichever `timestamp_format` the job used),
 *   ClientRequestMethod, ClientRequestPath (or ClientRequestURI), EdgeResponseStatus,
 *   EdgeResponseBytes, ClientRequestUserAgent, ClientRequestHost, RayID (the dedupe key).
 * - CloudFront standard logs (W3C): `#Version:` and `#Fields:` header lines, then
 *   tab-separated values in that order (date, time, cs-method, cs-uri-stem, sc-status,
 *   sc-bytes, cs(User-Agent) URL-encoded, x-edge-request-id (the dedupe key), ...); `-` is
 *   empty.
 */
import crypto from 'node:crypto';
import type { AccessRecord } from './access-record.js';

export type LogFormat = 'nginx' | 'cloudflare' | 'cloudfront';

/** What one line gave: a record, nothing to count (a header, a blank line), or why it is bad. */
export type LineResult =
  { record: AccessRecord; host: string | null } | { ignore: true } | { bad: string };

export interface LineParser {
  format: LogFormat;
  parse(line: string): LineResult;
}

const IGNORE = { ignore: true } as const;

/** The format of a log, from its first non-blank line; null when it is none of ours. */
export function detectFormat(firstLine: string): LogFormat | null {
  const line = firstLine.replace(/^\uFEFF/, '').trimStart();
  if (line.startsWith('#Version:') || line.startsWith('#Fields:')) return 'cloudfront';
  if (line.startsWith('{')) return 'cloudflare';
  if (NGINX.test(line)) return 'nginx';
  return null;
}

export function createParser(format: LogFormat): LineParser {
  switch (format) {
    case 'nginx':
      return { format, parse: parseNginx };
    case 'cloudflare':
      return { format, parse: parseCloudflare };
    case 'cloudfront':
      return createCloudFrontParser();
  }
}

/**
 * A short stable hash of a line: the dedupe key of logs without a request id. Every key is
 * prefixed with its format (`cloudflare:<RayID>`, `cloudfront:<x-edge-request-id>`,
 * `nginx:<hash>`), beside the events API's `event:<id>`.
 */
export function lineHash(format: LogFormat, line: string): string {
  return `${format}:${crypto.createHash('sha256').update(line).digest('base64url').slice(0, 32)}`;
}

// --- nginx combined -------------------------------------------------------------------------

const QUOTED = '"((?:[^"\\\\]|\\\\.)*)"';
const NGINX = new RegExp(
  `^(\\S+) \\S+ (\\S+) \\[([^\\]]+)\\] ${QUOTED} (\\d{3}) (\\d+|-) ${QUOTED} ${QUOTED}(?:\\s.*)?$`,
);
const MONTHS: Record<string, number> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};
const TIME_LOCAL =
  /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;

/** `10/Oct/2000:13:55:36 -0700` -> the instant, or null. */
export function parseTimeLocal(value: string): Date | null {
  const m = TIME_LOCAL.exec(value);
  if (!m) return null;
  const month = MONTHS[m[2]!];
  if (month === undefined) return null;
  const [day, year, h, min, s] = [m[1], m[3], m[4], m[5], m[6]].map(Number) as number[];
  if (day! < 1 || day! > 31 || h! > 23 || min! > 59 || s! > 60) return null;
  const offset = (Number(m[8]) * 60 + Number(m[9])) * (m[7] === '-' ? -1 : 1);
  return new Date(Date.UTC(year!, month, day!, h!, min!, s!) - offset * 60_000);
}

/** nginx writes `"`, `\`, control and non-ASCII bytes as `\xHH`: back to the text. */
export function unescapeNginx(value: string): string {
  if (!value.includes('\\')) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 92 && value[i + 1] === 'x' && /^[0-9a-fA-F]{2}$/.test(value.slice(i + 2, i + 4))) {
      bytes.push(parseInt(value.slice(i + 2, i + 4), 16));
      i += 3;
    } else if (c === 92 && i + 1 < value.length) {
      bytes.push(value.charCodeAt(++i) & 0xff);
    } else if (c < 0x80) bytes.push(c);
    else for (const b of Buffer.from(value[i]!, 'utf8')) bytes.push(b);
  }
  return Buffer.from(bytes).toString('utf8');
}

function parseNginx(line: string): LineResult {
  if (line.trim() === '') return IGNORE;
  const m = NGINX.exec(line);
  if (!m) return { bad: 'not an nginx combined log line' };
  const at = parseTimeLocal(m[3]!);
  if (!at) return { bad: `time: '${m[3]}' is not nginx's $time_local` };
  const request = unescapeNginx(m[4]!);
  const parts = request.split(' ');
  // A request line that is not "METHOD target PROTOCOL" (a probe, garbage) asked for no path.
  let target = parts.length >= 2 && parts[1]!.startsWith('/') ? parts[1]! : null;
  if (!target && parts.length >= 2 && /^https?:\/\//i.test(parts[1]!)) {
    // The absolute form (`GET http://host/path HTTP/1.1`, what a proxy is sent).
    const rest = parts[1]!.replace(/^https?:\/\/[^/?#]*/i, '');
    target = rest.startsWith('/') ? rest : '/';
  }
  const q = target ? target.indexOf('?') : -1;
  const ua = m[8] === '-' || m[8] === '' ? null : unescapeNginx(m[8]!);
  return {
    record: {
      at,
      method: parts[0] || 'GET',
      path: target ? (q < 0 ? target : target.slice(0, q)) : '',
      status: Number(m[5]),
      bytes: m[6] === '-' ? 0 : Number(m[6]),
      userAgent: ua,
      signatureAgent: null,
      dedupeKey: lineHash('nginx', line),
      source: 'nginx',
    },
    host: null,
  };
}

// --- Cloudflare Logpush ---------------------------------------------------------------------

/**
 * EdgeStartTimestamp in the encodings Logpush writes: an RFC 3339 string, unix seconds or
 * unix nanoseconds (numbers, or digits in a string); milli- and microseconds are told apart by
 * size too. Null when it is none of them.
 */
export function parseEdgeTimestamp(value: unknown): Date | null {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) n = Number(value);
  else if (typeof value === 'string') {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value))
      return null;
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : new Date(ms);
  } else return null;
  if (!Number.isFinite(n) || n <= 0) return null;
  const ms = n >= 1e17 ? n / 1e6 : n >= 1e14 ? n / 1e3 : n >= 1e11 ? n : n * 1000;
  const d = new Date(Math.floor(ms));
  return Number.isNaN(d.getTime()) ? null : d;
}

function parseCloudflare(line: string): LineResult {
  if (line.trim() === '') return IGNORE;
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return { bad: 'not a JSON object' };
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) return { bad: 'not a JSON object' };
  const at = parseEdgeTimestamp(o.EdgeStartTimestamp);
  if (!at)
    return {
      bad: 'EdgeStartTimestamp: missing, or not RFC 3339, unix seconds or unix nanoseconds',
    };
  let path: string;
  if (typeof o.ClientRequestPath === 'string' && o.ClientRequestPath !== '')
    path = o.ClientRequestPath;
  else if (typeof o.ClientRequestURI === 'string' && o.ClientRequestURI !== '') {
    const q = o.ClientRequestURI.indexOf('?');
    path = q < 0 ? o.ClientRequestURI : o.ClientRequestURI.slice(0, q);
  } else return { bad: 'ClientRequestPath: missing (and no ClientRequestURI)' };
  const status = o.EdgeResponseStatus;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 0 || status > 999)
    return { bad: 'EdgeResponseStatus: missing or not an HTTP status' };
  const bytes = typeof o.EdgeResponseBytes === 'number' ? o.EdgeResponseBytes : 0;
  const ua = typeof o.ClientRequestUserAgent === 'string' ? o.ClientRequestUserAgent : '';
  const ray = typeof o.RayID === 'string' && o.RayID !== '' ? o.RayID : null;
  const headers = o.RequestHeaders as Record<string, unknown> | undefined;
  const sig = headers && typeof headers === 'object' ? headers['signature-agent'] : undefined;
  return {
    record: {
      at,
      method: typeof o.ClientRequestMethod === 'string' ? o.ClientRequestMethod : 'GET',
      path,
      status,
      bytes: Number.isFinite(bytes) && bytes >= 0 ? bytes : 0,
      userAgent: ua === '' ? null : ua,
      signatureAgent: typeof sig === 'string' && sig !== '' ? sig : null,
      dedupeKey: ray ? `cloudflare:${ray}` : lineHash('cloudflare', line),
      source: 'cloudflare',
    },
    host: typeof o.ClientRequestHost === 'string' ? o.ClientRequestHost : null,
  };
}

// --- CloudFront standard logs ---------------------------------------------------------------

function urlDecoded(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function createCloudFrontParser(): LineParser {
  let columns: Map<string, number> | null = null;
  return {
    format: 'cloudfront',
    parse(line: string): LineResult {
      if (line.startsWith('#')) {
        if (line.startsWith('#Fields:')) {
          const names = line.slice('#Fields:'.length).trim().split(/\s+/);
          columns = new Map(names.map((n, i) => [n, i]));
          for (const required of ['date', 'time', 'cs-uri-stem', 'sc-status'])
            if (!columns.has(required)) {
              columns = null;
              return { bad: `#Fields: has no ${required}` };
            }
        }
        return IGNORE;
      }
      if (line.trim() === '') return IGNORE;
      if (!columns) return { bad: 'a log line before any #Fields: header' };
      const cols = columns;
      const v = line.split('\t');
      if (v.length < cols.size)
        return { bad: `${v.length} fields where #Fields: names ${cols.size}` };
      const get = (name: string): string | null => {
        const i = cols.get(name);
        const value = i === undefined ? undefined : v[i];
        return value === undefined || value === '-' ? null : value;
      };
      const date = get('date');
      const time = get('time');
      if (!date || !time || !/^\d{4}-\d{2}-\d{2}$/.test(date) || !/^\d{2}:\d{2}:\d{2}$/.test(time))
        return { bad: 'date/time: not YYYY-MM-DD and HH:MM:SS' };
      const at = new Date(`${date}T${time}Z`);
      if (Number.isNaN(at.getTime())) return { bad: `date/time: '${date} ${time}' is no date` };
      const status = get('sc-status');
      if (!status || !/^\d{1,3}$/.test(status)) return { bad: 'sc-status: not an HTTP status' };
      const path = get('cs-uri-stem');
      if (!path) return { bad: 'cs-uri-stem: missing' };
      const bytes = get('sc-bytes');
      const ua = get('cs(User-Agent)');
      const id = get('x-edge-request-id');
      return {
        record: {
          at,
          method: get('cs-method') ?? 'GET',
          path,
          status: Number(status),
          bytes: bytes && /^\d+$/.test(bytes) ? Number(bytes) : 0,
          userAgent: ua === null ? null : urlDecoded(ua),
          signatureAgent: null,
          dedupeKey: id ? `cloudfront:${id}` : lineHash('cloudfront', line),
          source: 'cloudfront',
        },
        host: get('x-host-header') ?? get('cs(Host)'),
      };
    },
  };
}
