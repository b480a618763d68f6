import { randomUUID } from 'node:crypto';
import { AwsV4Signer } from 'aws4fetch';
import type { CdnPurgeSetting } from '../config.js';
import { escapeHtml } from '../markup.js';
import { createHttpClient, type HttpClientOptions, type HttpResponse } from '../net/http-client.js';
import { hasBucketSiblings } from './manifest.js';

/**
 * The CDN purge after an upload (CONTRACT part 12): exactly the changed URLs, brand URLs
 * first, then index.json, then the home page, in calls of the size each provider takes:
 * Cloudflare (POST zones/ZONE/purge_cache, `files`, up to 100 URLs a call), Fastly (POST
 * purge/HOST/PATH, one URL a call), CloudFront (CreateInvalidation, SigV4, up to 1,000
 * paths a call), bunny.net (POST purge?url=URL, one a call). The webhook "CDN" is the
 * outbox's (domain/publications). Calls go through the guarded client, with its retries.
 */

/** Sends one purge of these URLs; throws with the provider's answer when it refuses. */
export type Purger = (urls: string[]) => Promise<void>;

export interface CdnCredentials {
  cloudflareToken?: string | undefined;
  fastlyToken?: string | undefined;
  bunnyKey?: string | undefined;
  aws?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined };
}

const APIS: Record<Exclude<CdnPurgeSetting['kind'], 'webhook'>, string> = {
  cloudflare: 'https://api.cloudflare.com/client/v4',
  fastly: 'https://api.fastly.com',
  cloudfront: 'https://cloudfront.amazonaws.com',
  bunny: 'https://api.bunny.net',
};

/** URLs per call: Cloudflare's documented limit, and CloudFront's batch we keep under its 3,000. */
export const CLOUDFLARE_BATCH = 100;
export const CLOUDFRONT_BATCH = 1000;

/**
 * The public URLs of changed keys, for a purge: a compressed sibling's URL is its plain file's
 * (the CDN serves both at that address), a page's is its directory (`/v1/brands/x/`), the home
 * page's `/`; the serving rules (`_headers`, `_redirects`) are not served and not purged. In
 * the purge order: brand URLs (sorted), then the root files that name them (sitemap.xml,
 * llms.txt, ...), then index.json, then the home page, each once.
 */
export function purgeUrlsOf(changed: readonly string[], feedsUrl: string): string[] {
  const brands = new Set<string>();
  // The root files agents look for (sitemap.xml, llms.txt, ...) name the brands: after them.
  const naming = new Set<string>();
  let index = false;
  let home = false;
  for (const key of changed) {
    const plain = key.replace(/\.(gz|br)$/, '');
    if (plain.startsWith('_') || plain.startsWith('cdn/')) continue;
    if (plain === 'index.html') home = true;
    else if (plain === 'v1/index.json') index = true;
    else if (!plain.startsWith('v1/')) naming.add(`${feedsUrl}/${plain}`);
    else if (plain.endsWith('/index.html')) brands.add(`${feedsUrl}/${plain.slice(0, -10)}`);
    else brands.add(`${feedsUrl}/${plain}`);
  }
  return [
    ...[...brands].sort(),
    ...[...naming].sort(),
    ...(index ? [`${feedsUrl}/v1/index.json`] : []),
    ...(home ? [`${feedsUrl}/`] : []),
  ];
}

/**
 * The paths to invalidate on CloudFront for one URL: the function the pipeline writes
 * (cdn/cloudfront-function.js) maps a URL to an object key (a directory to its index.html,
 * `/v1/brands/<slug>` to its JSON, then a feed to its `.br` or `.gz` by Accept-Encoding), and
 * that key is what CloudFront caches under, so each variant is invalidated (an invalidation of
 * a path also drops the copies CloudFront compressed itself).
 */
export function cloudfrontPaths(url: string): string[] {
  let path = new URL(url).pathname;
  if (path.endsWith('/')) path += 'index.html';
  else if (/^\/v1\/brands\/[^/.]+$/.test(path)) path += '.json';
  return hasBucketSiblings(path) ? [path, `${path}.gz`, `${path}.br`] : [path];
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

async function refused(res: HttpResponse, what: string): Promise<Error> {
  const body = (await res.text().catch(() => '')).slice(0, 300).replace(/\s+/g, ' ');
  return new Error(`${what}: HTTP ${res.status}${body ? ` ${body}` : ''}`);
}

/** The purger of a CDN_PURGE provider (not webhook: that one writes to the outbox). */
export function createPurger(
  setting: CdnPurgeSetting,
  credentials: CdnCredentials,
  options: Pick<HttpClientOptions, 'allowPrivate' | 'backoffMs' | 'sleep' | 'signal'>,
): Purger {
  if (setting.kind === 'webhook') throw new Error('the webhook purge is the outbox, not a call');
  const http = createHttpClient({ ...options, userAgent: 'agentshelf-purge' });
  const api = setting.api ?? APIS[setting.kind];
  const post = (url: string, headers: Record<string, string>, body?: string) =>
    http.request({
      method: 'POST',
      url,
      headers,
      ...(body !== undefined ? { body } : {}),
      retry: true,
    });

  switch (setting.kind) {
    case 'cloudflare':
      return async (urls) => {
        for (const files of chunks(urls, CLOUDFLARE_BATCH)) {
          const res = await post(
            `${api}/zones/${encodeURIComponent(setting.id)}/purge_cache`,
            {
              authorization: `Bearer ${credentials.cloudflareToken ?? ''}`,
              'content-type': 'application/json',
            },
            JSON.stringify({ files }),
          );
          const answer =
            res.status === 200 ? ((await res.json()) as { success?: boolean }) : undefined;
          if (!answer?.success) throw await refused(res, 'Cloudflare purge');
        }
      };
    case 'fastly':
      return async (urls) => {
        for (const url of urls) {
          const target = url.replace(/^https?:\/\//, '');
          const res = await post(`${api}/purge/${target}`, {
            'fastly-key': credentials.fastlyToken ?? '',
            accept: 'application/json',
          });
          if (res.status !== 200) throw await refused(res, `Fastly purge of ${url}`);
          res.discard();
        }
      };
    case 'bunny':
      return async (urls) => {
        for (const url of urls) {
          const res = await post(`${api}/purge?url=${encodeURIComponent(url)}`, {
            accesskey: credentials.bunnyKey ?? '',
          });
          if (res.status !== 200 && res.status !== 204)
            throw await refused(res, `bunny.net purge of ${url}`);
          res.discard();
        }
      };
    case 'cloudfront':
      return async (urls) => {
        const paths = [...new Set(urls.flatMap(cloudfrontPaths))];
        for (const batch of chunks(paths, CLOUDFRONT_BATCH)) {
          const items = batch.map((p) => `<Path>${escapeHtml(p)}</Path>`).join('');
          const body = `<?xml version="1.0" encoding="UTF-8"?><InvalidationBatch xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><CallerReference>agentshelf-${randomUUID()}</CallerReference><Paths><Quantity>${batch.length}</Quantity><Items>${items}</Items></Paths></InvalidationBatch>`;
          const url = `${api}/2020-05-31/distribution/${encodeURIComponent(setting.id)}/invalidation`;
          const signed = await new AwsV4Signer({
            method: 'POST',
            url,
            headers: { 'content-type': 'text/xml' },
            body,
            accessKeyId: credentials.aws?.accessKeyId ?? '',
            secretAccessKey: credentials.aws?.secretAccessKey ?? '',
            ...(credentials.aws?.sessionToken
              ? { sessionToken: credentials.aws.sessionToken }
              : {}),
            service: 'cloudfront',
            region: 'us-east-1',
          }).sign();
          const headers: Record<string, string> = {};
          signed.headers.forEach((value, name) => {
            headers[name] = value;
          });
          const res = await post(url, headers, body);
          if (res.status !== 201) throw await refused(res, 'CloudFront invalidation');
          res.discard();
        }
      };
  }
}
