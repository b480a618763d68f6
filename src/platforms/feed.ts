import { Transform, pipeline, type Readable, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { HttpError, type HttpResponse } from '../net/http-client.js';
import {
  SourceError,
  type IntegrationSource,
  type SourceContext,
  type SourceItem,
  type SourceTestResult,
} from '../domain/integrations/source.js';
import { recordToItem } from './feed-columns.js';
import {
  FeedFormatError,
  isFeedFormat,
  peekStream,
  readRecords,
  sniffFormat,
  type FeedFormat,
  type RawFields,
} from './feed-formats.js';

/**
 * `platform: feed`: a product feed at a URL (settings.url), read as it streams in. Formats
 * and columns: feed-formats.ts and feed-columns.ts. An unchanged feed costs one request: the
 * ETag and Last-Modified of the last good read are sent back (If-None-Match,
 * If-Modified-Since), and a 304 yields `not_modified` alone.
 *
 * Settings: `url` (required), `max_bytes` (the size cap, default 200 MB; a gzip body is held
 * to it both packed and unpacked), `format` (csv, tsv, json, ndjson or xml, when sniffing
 * should not decide), `timeout_ms` (the longest silence, default the server's idle timeout,
 * 30 s; a silent server is not asked again). Credentials (optional): `{username, password}`
 * for HTTP Basic, or `{token}` for a bearer token.
 *
 * A gzip body (by its first bytes, whatever the headers say) is unpacked as it streams; one
 * that ends early fails the run, like every other feed cut short (feed-formats.ts).
 */

export const DEFAULT_FEED_MAX_BYTES = 200 * 1024 * 1024;
const ACCEPT =
  'text/csv, text/tab-separated-values, application/json, application/x-ndjson, ' +
  'application/xml;q=0.9, application/rss+xml;q=0.9, application/atom+xml;q=0.9, */*;q=0.5';

export interface FeedSettings {
  url: string;
  maxBytes: number;
  format: FeedFormat | undefined;
  /** Undefined: the HTTP client's idle timeout (IntegrationEnv.idleTimeoutMs, 30 s). */
  timeoutMs: number | undefined;
}

/** The saved state of a feed: the validators of the last good read, for that URL. */
interface FeedState {
  url?: string;
  etag?: string | null;
  last_modified?: string | null;
}

/**
 * A feed integration's settings, checked: throws SourceError (`invalid`) naming the setting
 * and the problem. The API may call it when an integration is created or changed.
 */
export function readFeedSettings(settings: Readonly<Record<string, unknown>>): FeedSettings {
  const url = settings.url;
  if (typeof url !== 'string' || url.trim() === '')
    throw new SourceError('settings.url is required: the address of the product feed', 'invalid');
  const maxBytes = settings.max_bytes ?? DEFAULT_FEED_MAX_BYTES;
  if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 1)
    throw new SourceError('settings.max_bytes must be a whole number of bytes above 0', 'invalid');
  const format = settings.format;
  if (format !== undefined && !isFeedFormat(format))
    throw new SourceError('settings.format must be csv, tsv, json, ndjson or xml', 'invalid');
  const timeoutMs = settings.timeout_ms;
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1)
  )
    throw new SourceError('settings.timeout_ms must be a whole number of milliseconds', 'invalid');
  return { url: url.trim(), maxBytes, format, timeoutMs };
}

function authHeaders(credentials: SourceContext['credentials']): Record<string, string> {
  if (!credentials) return {};
  if (credentials.token) return { authorization: `Bearer ${credentials.token}` };
  if (credentials.username !== undefined && credentials.password !== undefined) {
    const basic = Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64');
    return { authorization: `Basic ${basic}` };
  }
  return {};
}

/** A failed request or read as the run's failure, in words for a merchant. */
export function toSourceError(err: unknown, settings?: FeedSettings): unknown {
  if (err instanceof SourceError) return err;
  if (err instanceof HttpError) {
    switch (err.code) {
      case 'too_large':
        return new SourceError(
          `the feed is larger than the ${settings?.maxBytes ?? DEFAULT_FEED_MAX_BYTES}-byte cap ` +
            '(raise settings.max_bytes to read it)',
          'invalid',
        );
      case 'refused':
      case 'too_many_redirects':
        return new SourceError(`the feed URL cannot be fetched: ${err.message}`, 'invalid');
      default:
        return new SourceError(`the feed could not be read: ${err.message}`, 'unavailable');
    }
  }
  if (err instanceof FeedFormatError)
    return new SourceError(`the feed cannot be read: ${err.message}`, 'invalid');
  const code = (err as { code?: unknown } | null)?.code;
  // zlib: Z_BUF_ERROR is a stream that ends before its end; the others, damaged data.
  if (code === 'Z_BUF_ERROR')
    return new SourceError(
      'the feed cannot be read: the gzip data ends early: the feed is cut short',
      'invalid',
    );
  if (typeof code === 'string' && code.startsWith('Z_'))
    return new SourceError(
      `the feed cannot be read: the gzip data is damaged (${(err as Error).message})`,
      'invalid',
    );
  if (typeof code === 'string' && code.startsWith('CSV_'))
    return new SourceError(`the feed cannot be read as CSV: ${(err as Error).message}`, 'invalid');
  return err;
}

function statusError(res: HttpResponse): SourceError {
  const what = `the feed URL answered HTTP ${res.status}`;
  if (res.status === 401 || res.status === 403)
    return new SourceError(`${what}: it needs credentials, or refuses the ones given`, 'auth');
  if (res.status === 404 || res.status === 410)
    return new SourceError(`${what}: there is no feed at that address`, 'invalid');
  if (res.status === 429 || res.status >= 500)
    return new SourceError(`${what}, also after retries; the next sync tries again`, 'unavailable');
  return new SourceError(what, 'invalid');
}

async function fetchFeed(
  ctx: SourceContext,
  settings: FeedSettings,
  conditional: FeedState | undefined,
): Promise<HttpResponse> {
  const headers: Record<string, string> = { accept: ACCEPT, ...authHeaders(ctx.credentials) };
  if (conditional?.etag) headers['if-none-match'] = conditional.etag;
  if (conditional?.last_modified) headers['if-modified-since'] = conditional.last_modified;
  try {
    return await ctx.http.request({
      url: settings.url,
      headers,
      maxBytes: settings.maxBytes,
      ...(settings.timeoutMs !== undefined ? { timeoutMs: settings.timeoutMs } : {}),
      retryTimeouts: false,
    });
  } catch (err) {
    throw runFailure(ctx, err, settings);
  }
}

/** Why the run stopped (its deadline, said in words), else the failure in a merchant's words. */
function runFailure(ctx: SourceContext, err: unknown, settings?: FeedSettings): unknown {
  const reason: unknown = ctx.signal.aborted ? ctx.signal.reason : undefined;
  if (reason instanceof SourceError) return reason;
  return toSourceError(err, settings);
}

/** The first bytes of gzip data (RFC 1952). */
function isGzip(bytes: Buffer): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** Passes bytes until `max`, then fails: what a gzip body unpacks to is held to the cap too. */
class UnpackedCap extends Transform {
  private seen = 0;
  constructor(private readonly max: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.max)
      return done(
        new FeedFormatError(
          `the gzip data unpacks to more than the ${this.max}-byte cap ` +
            '(raise settings.max_bytes to read it)',
        ),
      );
    done(null, chunk);
  }
}

function gunzipped(body: Readable, maxBytes: number): Readable {
  const cap = new UnpackedCap(maxBytes);
  pipeline(body, createGunzip(), cap, () => {});
  return cap;
}

/** The records of a 200 answer, with the format they were read as. */
async function openRecords(res: HttpResponse, settings: FeedSettings) {
  const peeked = await peekStream(res.body);
  const { bytes } = peeked;
  let { head, body } = peeked;
  let path = new URL(res.url).pathname;
  let contentType = res.headers['content-type'];
  if (isGzip(bytes)) {
    ({ head, body } = await peekStream(gunzipped(body, settings.maxBytes)));
    path = path.replace(/\.gz$/i, '');
    if (/gzip/i.test(contentType ?? '')) contentType = undefined;
  }
  const format = settings.format ?? sniffFormat(head, { contentType, path });
  return { format, body, records: readRecords(body, format) };
}

async function* items(ctx: SourceContext): AsyncGenerator<SourceItem> {
  const settings = readFeedSettings(ctx.settings);
  const state = ctx.state as FeedState;
  const conditional = state.url === settings.url ? state : undefined;
  const res = await fetchFeed(ctx, settings, conditional);
  if (res.status === 304) {
    res.discard();
    if (!conditional?.etag && !conditional?.last_modified)
      throw new SourceError('the feed URL answered 304 to a request that asked nothing', 'invalid');
    // The validators stay what they were.
    ctx.setState({ ...conditional });
    yield { kind: 'not_modified' };
    return;
  }
  if (res.status !== 200) {
    res.discard();
    throw statusError(res);
  }
  ctx.setState({
    url: settings.url,
    etag: res.headers.etag ?? null,
    last_modified: res.headers['last-modified'] ?? null,
  });
  const mapping = { defaultCurrency: ctx.defaultCurrency, now: ctx.now() };
  // Ids seen, so that a repeated id fails alone instead of overwriting the first.
  const seen = new Map<string, number>();
  try {
    const { records, body } = await openRecords(res, settings);
    try {
      for await (const record of records) {
        if (ctx.signal.aborted) throw runFailure(ctx, new SourceError('the sync was stopped'));
        if (record.kind === 'bad') {
          yield {
            kind: 'error',
            externalId: null,
            field: 'item',
            reason: `item ${record.position} cannot be read: ${record.reason}`,
          };
          continue;
        }
        const item = recordToItem(record.fields, record.position, mapping);
        if (item.kind === 'product') {
          const earlier = seen.get(item.externalId);
          if (earlier !== undefined) {
            yield {
              kind: 'error',
              externalId: item.externalId,
              field: 'id',
              reason: `the id is repeated (item ${record.position}; item ${earlier} is kept)`,
            };
            continue;
          }
          seen.set(item.externalId, record.position);
        }
        yield item;
      }
    } finally {
      body.destroy();
    }
  } catch (err) {
    throw runFailure(ctx, err, settings);
  }
}

/** A name for the columns of a record: which dialect they look like. */
export function describeColumns(fields: RawFields): string {
  const has = (name: string) => name in fields;
  const newer = has('is_eligible_search') || has('is_eligible_checkout');
  const older = has('enable_search') || has('enable_checkout');
  if (newer && older) return 'OpenAI / ACP flat feed columns (both flag names, as our exports)';
  if (newer) return 'OpenAI / ACP flat feed columns (current flag names)';
  if (older) return 'OpenAI / ACP flat feed columns';
  if (has('image_link') || has('google_product_category') || has('availability'))
    return 'Google Merchant Center columns';
  return 'columns of no known dialect (read by name)';
}

const FORMAT_NAMES: Record<FeedFormat, string> = {
  csv: 'CSV',
  tsv: 'tab-separated',
  json: 'JSON',
  ndjson: 'NDJSON',
  xml: 'XML',
};

async function test(ctx: SourceContext): Promise<SourceTestResult> {
  let settings: FeedSettings;
  try {
    settings = readFeedSettings(ctx.settings);
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
  try {
    const res = await fetchFeed(ctx, settings, undefined);
    if (res.status !== 200) {
      res.discard();
      return { ok: false, message: statusError(res).message };
    }
    const { format, records, body } = await openRecords(res, settings);
    try {
      for await (const record of records) {
        const kind = FORMAT_NAMES[format];
        if (record.kind === 'bad')
          return {
            ok: false,
            message: `Read a ${kind} feed, but its first item cannot be read: ${record.reason}`,
          };
        const columns = Object.keys(record.fields);
        const item = recordToItem(record.fields, record.position, {
          defaultCurrency: ctx.defaultCurrency,
          now: ctx.now(),
        });
        const verdict =
          item.kind === 'product'
            ? `it reads as product "${item.externalId}"`
            : `it cannot become a product: ${item.kind === 'error' ? `${item.field} ${item.reason}` : ''}`;
        return {
          ok: true,
          message:
            `Read a ${kind} feed with ${describeColumns(record.fields)}. ` +
            `The first item has the columns ${columns.join(', ')}; ${verdict}.`,
        };
      }
      return { ok: false, message: `Read a ${FORMAT_NAMES[format]} feed, but it has no items.` };
    } finally {
      body.destroy();
    }
  } catch (err) {
    const failure = runFailure(ctx, err, settings);
    return { ok: false, message: failure instanceof Error ? failure.message : String(failure) };
  }
}

export const feedSource: IntegrationSource = { test, items };
