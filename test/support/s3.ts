import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import S3rver from '@20minutes/s3rver';
import type { Test } from 'tap';
import { AwsV4Signer } from 'aws4fetch';

/** A request the proxy passed on (or answered itself). */
export interface SeenRequest {
  method: string;
  /** The path and query, as sent. */
  url: string;
}

/** What the proxy does instead of passing a request on: an S3 error answer, or a cut connection. */
export type Fault =
  | { status: number; code: string; retryAfter?: string }
  /** The connection is cut once the first bytes of the body arrive (a reset mid-upload). */
  | 'reset'
  /** No answer, ever (a store that hangs; the test kills the client). */
  | 'hold';

export interface S3Fake {
  /** The proxy's address: what PUBLISH_TARGET's endpoint names. */
  endpoint: string;
  bucket: string;
  requests: SeenRequest[];
  /** Decides, per request, whether to pass it on (undefined) or fail it. */
  fault: ((req: SeenRequest) => Fault | undefined) | undefined;
  /**
   * Rewrites the ETags of listings (a store whose ETags are not MD5s: multipart uploads,
   * SSE-KMS), which s3rver never gives by itself.
   */
  listingEtag: ((etag: string) => string) | undefined;
  /** Reads an object straight from s3rver, signed with its keys (undefined when missing). */
  get(key: string): Promise<{ headers: Headers; body: Buffer } | undefined>;
}

export const S3RVER_KEY = 'S3RVER';

/**
 * s3rver (a real S3-compatible server that verifies SigV4; keys S3RVER/S3RVER) on a loopback
 * port, with one bucket, behind a proxy that logs every request and injects the faults real
 * stores produce (503 SlowDown, 429, a reset mid-upload), which s3rver never does by itself.
 */
export async function startS3(t: Test, bucket = 'shelf'): Promise<S3Fake> {
  // Not t.testdir(): a later call of it in the same test (the store's) empties it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentshelf-s3-'));
  const { fake, close } = await startS3Server(dir, [bucket]);
  t.teardown(async () => {
    await close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return fake;
}

/** startS3 for a benchmark: s3rver storing under `dir`, with these buckets (the first is `bucket`). */
export async function startS3Server(
  dir: string,
  buckets: string[],
): Promise<{ fake: S3Fake; close: () => Promise<void> }> {
  const bucket = buckets[0]!;
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const { port: upstream } = await s3.run();
  const fake: S3Fake = {
    endpoint: '',
    bucket,
    requests: [],
    fault: undefined,
    listingEtag: undefined,
    get: async (key) => {
      const url = `http://127.0.0.1:${upstream}/${bucket}/${key}`;
      const signed = await new AwsV4Signer({
        url,
        accessKeyId: S3RVER_KEY,
        secretAccessKey: S3RVER_KEY,
        service: 's3',
        region: 'us-east-1',
      }).sign();
      const headers: Record<string, string> = {};
      signed.headers.forEach((value, name) => {
        headers[name] = value;
      });
      // node:http, not fetch: the bytes as stored (fetch would undo a Content-Encoding).
      const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(signed.url, { headers }, resolve).on('error', reject),
      );
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      if (res.statusCode === 404) return undefined;
      if (res.statusCode !== 200) throw new Error(`GET ${key}: ${res.statusCode} ${String(body)}`);
      const answer = new Headers();
      for (const [name, value] of Object.entries(res.headers))
        if (typeof value === 'string') answer.set(name, value);
      return { headers: answer, body };
    },
  };
  const proxy = http.createServer((req, res) => {
    const seen = { method: req.method ?? 'GET', url: req.url ?? '/' };
    fake.requests.push(seen);
    const fault = fake.fault?.(seen);
    if (fault === 'reset') {
      req.once('data', () => req.socket.destroy());
      return;
    }
    if (fault === 'hold') {
      req.resume();
      return;
    }
    if (fault) {
      req.resume();
      res.writeHead(fault.status, {
        'content-type': 'application/xml',
        ...(fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}),
      });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${fault.code}</Code><Message>injected by the test</Message></Error>`,
      );
      return;
    }
    const out = http.request(
      {
        host: '127.0.0.1',
        port: upstream,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        const rewrite = fake.listingEtag;
        if (!rewrite || !seen.url.includes('list-type=2')) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          const body = Buffer.concat(chunks)
            .toString('utf8')
            .replace(
              /<ETag>([^<]*)<\/ETag>/g,
              (_m, etag: string) => `<ETag>${rewrite(etag)}</ETag>`,
            );
          const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(body)) };
          res.writeHead(answer.statusCode ?? 502, headers);
          res.end(body);
        });
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  fake.endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const close = async () => {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
    await s3.close();
  };
  return { fake, close };
}

/** PUBLISH_TARGET and keys for a fake, as a test's environment. */
export function s3Env(fake: S3Fake, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PUBLISH_TARGET: `s3://${fake.bucket}/registry?endpoint=${encodeURIComponent(fake.endpoint)}&region=us-east-1`,
    AWS_ACCESS_KEY_ID: S3RVER_KEY,
    AWS_SECRET_ACCESS_KEY: S3RVER_KEY,
    ALLOW_PRIVATE_TARGETS: 'true',
    ...extra,
  };
}
