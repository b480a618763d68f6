import { createHash } from 'node:crypto';
import { AwsV4Signer } from 'aws4fetch';
import { XMLParser } from 'fast-xml-parser';
import type { PublishTarget } from '../config.js';
import { escapeHtml } from '../markup.js';
import {
  createHttpClient,
  HttpError,
  type HttpClientOptions,
  type HttpResponse,
  type StreamBody,
} from '../net/http-client.js';

/**
 * The few S3 calls publishing needs (PutObject, HeadObject, ListObjectsV2, DeleteObjects, and
 * for objects above a threshold CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
 * AbortMultipartUpload),
 * signed with SigV4 by aws4fetch's signer and sent through the guarded, retrying client of
 * src/net/ (the SSRF guard on every connection, retries on 5xx, 429 and resets, Retry-After).
 * Works with S3, R2, B2, MinIO and s3rver: path-style URLs are signed as they are sent, and
 * no checksum header beyond Content-MD5 is added (R2 and B2 refuse some of the SDK's).
 */

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

export interface S3ClientOptions extends Pick<
  HttpClientOptions,
  'allowPrivate' | 'signal' | 'backoffMs' | 'sleep' | 'onRetry'
> {
  target: PublishTarget;
  credentials: S3Credentials;
  /** Attempts in all for each call (default 5). */
  attempts?: number;
  /** Objects larger than this go up in parts (default 64 MiB; S3 takes at most 5 GiB in one PUT). */
  multipartThreshold?: number;
  /** Bytes a part (default 16 MiB; S3's least is 5 MiB), raised so no object needs more than 10,000. */
  partSize?: number;
}

/** S3's limits: the largest single PUT, the least part (but the last), the most parts. */
export const MAX_SINGLE_PUT = 5 * 1024 ** 3;
export const MIN_PART_SIZE = 5 * 1024 ** 2;
export const MAX_PARTS = 10_000;

/** An object as a listing shows it. */
export interface RemoteObject {
  key: string;
  /** The ETag without quotes: the MD5 of the bytes for a single-part upload without SSE-KMS. */
  etag: string;
  size: number;
}

export interface PutObject {
  key: string;
  body: StreamBody;
  /** The bytes [start, start + length) of the body, for a multipart upload's parts. */
  range?: (start: number, length: number) => StreamBody;
  contentType: string;
  cacheControl: string;
  contentEncoding?: string | undefined;
  /** Hex MD5 of the body: sent as Content-MD5 (the store refuses a body that differs). */
  md5: string;
  /** Hex SHA-256 of the body: stored as x-amz-meta-sha256. */
  sha256: string;
}

/** An answer of the store that is an error: its status, S3 code and message, with a hint. */
export class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'S3Error';
  }
}

export interface S3Client {
  /** Every object under the target's prefix (keys relative to the prefix), page by page. */
  list(): AsyncIterable<RemoteObject[]>;
  put(object: PutObject): Promise<{ etag: string }>;
  /** The object's x-amz-meta-sha256, or undefined when it has none or is missing. */
  headSha256(key: string): Promise<string | undefined>;
  /** Deletes up to 1,000 objects in one call; resolves to the keys the store could not delete. */
  deleteBatch(keys: string[]): Promise<string[]>;
}

/** The most keys one DeleteObjects call takes. */
export const DELETE_BATCH = 1000;

const DEFAULT_THRESHOLD = 64 * 1024 ** 2;
const DEFAULT_PART_SIZE = 16 * 1024 ** 2;

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  isArray: (name) => name === 'Contents' || name === 'Error' || name === 'Deleted',
});

/** Hex MD5 of a body, read once (a part is hashed before it is sent, for its Content-MD5). */
async function md5Of(body: StreamBody): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of body.open()) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The part size for an object of `size` bytes: `preferred`, raised to fit in MAX_PARTS. */
export function partSizeFor(size: number, preferred: number): number {
  const least = Math.ceil(size / MAX_PARTS / MIN_PART_SIZE) * MIN_PART_SIZE;
  return Math.max(preferred, least, MIN_PART_SIZE);
}

/** Hints for the errors a merchant can fix, by S3 code. */
const HINTS: Record<string, string> = {
  SignatureDoesNotMatch: 'check AWS_SECRET_ACCESS_KEY and the region',
  InvalidAccessKeyId: 'check AWS_ACCESS_KEY_ID',
  AccessDenied: 'the key may not write to this bucket',
  NoSuchBucket: 'create the bucket or fix PUBLISH_TARGET',
  AuthorizationHeaderMalformed: 'check the region in PUBLISH_TARGET',
  BadDigest: 'the body changed on the way (Content-MD5 differs)',
};

export function createS3Client(options: S3ClientOptions): S3Client {
  const { target, credentials } = options;
  const http = createHttpClient({
    allowPrivate: options.allowPrivate,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    userAgent: 'agentshelf-publish',
  });
  const attempts = options.attempts ?? 5;

  async function send(
    method: 'GET' | 'PUT' | 'HEAD' | 'POST' | 'DELETE',
    url: string,
    headers: Record<string, string>,
    body?: StreamBody | Buffer,
  ): Promise<HttpResponse> {
    const signer = new AwsV4Signer({
      method,
      url,
      headers,
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken } : {}),
      service: 's3',
      region: target.region,
    });
    const signed = await signer.sign();
    const sent: Record<string, string> = {};
    signed.headers.forEach((value, name) => {
      sent[name] = value;
    });
    try {
      return await http.request({
        method,
        url: signed.url.toString(),
        headers: sent,
        ...(body !== undefined ? { body } : {}),
        // Every call here is idempotent (a PUT of the same bytes, a delete of the same keys).
        retry: true,
        attempts,
        maxRedirects: 0,
        maxBytes: 16 * 1024 * 1024,
      });
    } catch (err) {
      if (err instanceof HttpError) {
        throw new S3Error(0, err.code, `${method} ${describe(url)}: ${err.message}`);
      }
      throw err;
    }
  }

  /** The URL of a key (relative to the prefix), or of the bucket when key is undefined. */
  function urlOf(key: string | undefined, query = ''): string {
    const base = target.endpoint.pathname.replace(/\/+$/, '');
    const path =
      key === undefined
        ? ''
        : `/${(target.prefix + key).split('/').map(encodeURIComponent).join('/')}`;
    if (target.style === 'virtual') {
      const host = `${target.bucket}.${target.endpoint.host}`;
      return `${target.endpoint.protocol}//${host}${base}${path || '/'}${query}`;
    }
    // Path style: the bucket without a trailing slash (s3rver signs `/bucket`, as S3 accepts).
    return `${target.endpoint.origin}${base}/${target.bucket}${path}${query}`;
  }

  function describe(url: string): string {
    return new URL(url).pathname;
  }

  async function failure(res: HttpResponse, what: string): Promise<S3Error> {
    let code = `HTTP${res.status}`;
    let message = '';
    try {
      const text = await res.text();
      const parsed = parser.parse(text) as { Error?: { Code?: string; Message?: string }[] };
      const e = parsed.Error?.[0];
      if (e?.Code) code = String(e.Code);
      if (e?.Message) message = String(e.Message);
    } catch {
      // A body that is not S3's XML error: the status says enough.
    }
    const hint = HINTS[code];
    const words = [`${what}: ${res.status} ${code}`, message, hint].filter(Boolean).join('; ');
    return new S3Error(res.status, code, words);
  }

  /** The headers an object is stored with (on its PUT, or its multipart upload's creation). */
  function objectHeaders(object: PutObject): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': object.contentType,
      'cache-control': object.cacheControl,
      'x-amz-meta-sha256': object.sha256,
    };
    if (object.contentEncoding) headers['content-encoding'] = object.contentEncoding;
    return headers;
  }

  /** A single-part ETag is the MD5 of what the store kept: a different one is a torn body. */
  function checkEtag(res: HttpResponse, md5: string, what: string): string {
    const etag = (res.headers.etag ?? '').replace(/"/g, '');
    if (/^[0-9a-f]{32}$/.test(etag) && etag !== md5)
      throw new S3Error(
        res.status,
        'BadDigest',
        `${what}: the store kept other bytes (ETag ${etag}, MD5 ${md5})`,
      );
    return etag;
  }

  /**
   * CreateMultipartUpload, the parts one after another (each with its Content-MD5), then
   * CompleteMultipartUpload; on any failure AbortMultipartUpload, so no part is left billed.
   */
  async function putInParts(object: PutObject, range: NonNullable<PutObject['range']>) {
    const url = urlOf(object.key);
    const created = await send('POST', `${url}?uploads`, objectHeaders(object));
    if (created.status !== 200)
      throw await failure(created, `starting the upload of ${object.key}`);
    const uploadId = (
      parser.parse(await created.text()) as {
        InitiateMultipartUploadResult?: { UploadId?: string };
      }
    ).InitiateMultipartUploadResult?.UploadId;
    if (!uploadId)
      throw new S3Error(200, 'BadUpload', `starting the upload of ${object.key}: no UploadId`);
    const withId = `${url}?uploadId=${encodeURIComponent(uploadId)}`;
    try {
      const size = partSizeFor(object.body.length, options.partSize ?? DEFAULT_PART_SIZE);
      const parts: string[] = [];
      for (let start = 0; start < object.body.length; start += size) {
        const body = range(start, Math.min(size, object.body.length - start));
        const md5 = await md5Of(body);
        const n = parts.length + 1;
        const what = `uploading part ${n} of ${object.key}`;
        const headers = { 'content-md5': Buffer.from(md5, 'hex').toString('base64') };
        const res = await send(
          'PUT',
          `${url}?partNumber=${n}&uploadId=${encodeURIComponent(uploadId)}`,
          headers,
          body,
        );
        if (res.status !== 200) throw await failure(res, what);
        res.discard();
        parts.push(checkEtag(res, md5, what) || md5);
      }
      const xml = Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUpload>${parts
          .map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>"${etag}"</ETag></Part>`)
          .join('')}</CompleteMultipartUpload>`,
      );
      const done = await send('POST', withId, { 'content-type': 'application/xml' }, xml);
      // S3 may answer 200 and still fail: the error is then the body.
      const text = done.status === 200 ? await done.text() : '';
      const answer = parser.parse(text) as {
        CompleteMultipartUploadResult?: { ETag?: string };
      };
      if (done.status !== 200 || !answer.CompleteMultipartUploadResult)
        throw done.status === 200
          ? new S3Error(
              200,
              'BadUpload',
              `completing the upload of ${object.key}: ${text.slice(0, 200)}`,
            )
          : await failure(done, `completing the upload of ${object.key}`);
      return { etag: String(answer.CompleteMultipartUploadResult.ETag ?? '').replace(/"/g, '') };
    } catch (err) {
      // Best effort: a store that keeps the parts anyway drops them by its lifecycle rule.
      await send('DELETE', withId, {})
        .then((res) => res.discard())
        .catch(() => undefined);
      throw err;
    }
  }

  return {
    async *list() {
      let token: string | undefined;
      for (;;) {
        const query = new URLSearchParams({ 'list-type': '2', 'max-keys': '1000' });
        if (target.prefix) query.set('prefix', target.prefix);
        if (token) query.set('continuation-token', token);
        const url = urlOf(undefined, `?${query.toString()}`);
        const res = await send('GET', url, {});
        if (res.status !== 200) throw await failure(res, `listing ${target.label}`);
        const parsed = parser.parse(await res.text()) as {
          ListBucketResult?: {
            Contents?: { Key?: string; ETag?: string; Size?: string }[];
            IsTruncated?: string;
            NextContinuationToken?: string;
          };
        };
        const result = parsed.ListBucketResult;
        if (!result)
          throw new S3Error(
            res.status,
            'BadListing',
            `listing ${target.label}: not a ListObjectsV2 answer`,
          );
        yield (result.Contents ?? [])
          .filter((c) => typeof c.Key === 'string' && c.Key.startsWith(target.prefix))
          .map((c) => ({
            key: c.Key!.slice(target.prefix.length),
            etag: String(c.ETag ?? '').replace(/"/g, ''),
            size: Number(c.Size ?? 0),
          }));
        if (result.IsTruncated !== 'true' || !result.NextContinuationToken) return;
        token = result.NextContinuationToken;
      }
    },

    async put(object) {
      const threshold = Math.min(options.multipartThreshold ?? DEFAULT_THRESHOLD, MAX_SINGLE_PUT);
      if (object.range && object.body.length > threshold) return putInParts(object, object.range);
      const headers = {
        ...objectHeaders(object),
        'content-md5': Buffer.from(object.md5, 'hex').toString('base64'),
      };
      const res = await send('PUT', urlOf(object.key), headers, object.body);
      if (res.status !== 200) throw await failure(res, `uploading ${object.key}`);
      res.discard();
      return { etag: checkEtag(res, object.md5, `uploading ${object.key}`) };
    },

    async headSha256(key) {
      const res = await send('HEAD', urlOf(key), {});
      res.discard();
      if (res.status === 404) return undefined;
      if (res.status !== 200)
        throw new S3Error(res.status, `HTTP${res.status}`, `reading ${key}: ${res.status}`);
      return res.headers['x-amz-meta-sha256'];
    },

    async deleteBatch(keys) {
      if (keys.length === 0) return [];
      if (keys.length > DELETE_BATCH) throw new Error(`at most ${DELETE_BATCH} keys a batch`);
      const objects = keys
        .map((k) => `<Object><Key>${escapeHtml(target.prefix + k)}</Key></Object>`)
        .join('');
      const xml = Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>${objects}</Delete>`,
      );
      const headers = {
        'content-type': 'application/xml',
        'content-md5': createHash('md5').update(xml).digest('base64'),
      };
      const res = await send('POST', urlOf(undefined, '?delete'), headers, xml);
      if (res.status !== 200) throw await failure(res, `deleting from ${target.label}`);
      const parsed = parser.parse(await res.text()) as {
        DeleteResult?: { Error?: { Key?: string }[] };
      };
      return (parsed.DeleteResult?.Error ?? [])
        .map((e) => String(e.Key ?? ''))
        .filter((k) => k.startsWith(target.prefix))
        .map((k) => k.slice(target.prefix.length));
    },
  };
}
