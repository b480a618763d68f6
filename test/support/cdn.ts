import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AwsV4Signer } from 'aws4fetch';
import type { Test } from 'tap';

/** A purge call as the fake received it, once checked against the provider's documentation. */
export interface PurgeCall {
  provider: 'cloudflare' | 'fastly' | 'cloudfront' | 'bunny';
  /** The URLs (or, for CloudFront, paths) the call purges. */
  targets: string[];
}

export interface CdnFake {
  /** The API base of each provider: `${url}/cloudflare` and so on. */
  url: string;
  calls: PurgeCall[];
  /** Requests that broke the provider's rules (auth, shape, limits): a test expects none. */
  violations: string[];
  /** When set, Cloudflare answers 403 {success:false} (a revoked token). */
  refuse: boolean;
}

export const CDN_TOKEN = 'cdn-token-for-tests';

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Local stand-ins for the four purge APIs, each checking a request as its provider documents
 * it: Cloudflare `POST /zones/ZONE/purge_cache`, Bearer token, `{"files":[...]}` of at most
 * 100 URLs; Fastly `POST /purge/HOST/PATH` with Fastly-Key; CloudFront CreateInvalidation
 * (`POST /2020-05-31/distribution/ID/invalidation`, SigV4 for cloudfront/us-east-1 checked by
 * signing again, an InvalidationBatch whose Quantity counts its paths); bunny.net
 * `POST /purge?url=URL` with AccessKey.
 */
export async function startCdnFake(
  t: Test,
  awsKeys: { id: string; secret: string },
): Promise<CdnFake> {
  const fake: CdnFake = { url: '', calls: [], violations: [], refuse: false };
  const server = http.createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', fake.url);
      const [, provider, ...rest] = url.pathname.split('/');
      const path = `/${rest.join('/')}`;
      const bad = (why: string) => fake.violations.push(`${provider}: ${why}`);
      if (req.method !== 'POST') bad(`method ${req.method}`);
      switch (provider) {
        case 'cloudflare': {
          if (!/^\/zones\/[^/]+\/purge_cache$/.test(path)) bad(`path ${path}`);
          if (req.headers.authorization !== `Bearer ${CDN_TOKEN}`) bad('no Bearer token');
          if (!String(req.headers['content-type']).startsWith('application/json')) bad('not JSON');
          const files = (JSON.parse(body) as { files?: unknown }).files;
          if (!Array.isArray(files) || files.length === 0 || files.length > 100)
            bad(`files: ${JSON.stringify(files)}`);
          if (fake.refuse) {
            res.writeHead(403, { 'content-type': 'application/json' });
            res.end('{"success":false,"errors":[{"code":10000,"message":"Authentication error"}]}');
            return;
          }
          fake.calls.push({ provider, targets: files as string[] });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"success":true,"errors":[],"messages":[],"result":{"id":"x"}}');
          return;
        }
        case 'fastly': {
          if (!path.startsWith('/purge/') || /^\/purge\/https?:/.test(path)) bad(`path ${path}`);
          if (req.headers['fastly-key'] !== CDN_TOKEN) bad('no Fastly-Key');
          fake.calls.push({ provider, targets: [`https://${path.slice('/purge/'.length)}`] });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"status":"ok","id":"1"}');
          return;
        }
        case 'bunny': {
          if (path !== '/purge' || !url.searchParams.get('url')) bad(`path ${path}${url.search}`);
          if (req.headers.accesskey !== CDN_TOKEN) bad('no AccessKey');
          fake.calls.push({ provider, targets: [url.searchParams.get('url') ?? ''] });
          res.writeHead(200);
          res.end();
          return;
        }
        case 'cloudfront': {
          if (!/^\/2020-05-31\/distribution\/[^/]+\/invalidation$/.test(path)) bad(`path ${path}`);
          const again = await new AwsV4Signer({
            method: 'POST',
            url: url.toString(),
            headers: { 'content-type': String(req.headers['content-type']) },
            body,
            accessKeyId: awsKeys.id,
            secretAccessKey: awsKeys.secret,
            datetime: String(req.headers['x-amz-date']),
            service: 'cloudfront',
            region: 'us-east-1',
          }).sign();
          if (again.headers.get('authorization') !== req.headers.authorization)
            bad('the SigV4 signature does not match');
          const paths = [...body.matchAll(/<Path>([^<]*)<\/Path>/g)].map((m) => m[1]!);
          const quantity = Number(/<Quantity>(\d+)<\/Quantity>/.exec(body)?.[1]);
          if (!/<CallerReference>[^<]+<\/CallerReference>/.test(body)) bad('no CallerReference');
          if (quantity !== paths.length || paths.some((p) => !p.startsWith('/')))
            bad(`paths ${quantity}: ${paths.join(' ')}`);
          fake.calls.push({ provider, targets: paths });
          res.writeHead(201, { 'content-type': 'text/xml' });
          res.end(
            '<?xml version="1.0"?><Invalidation><Id>I1</Id><Status>InProgress</Status></Invalidation>',
          );
          return;
        }
        default:
          bad(`unknown path ${url.pathname}`);
          res.writeHead(404);
          res.end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return fake;
}
