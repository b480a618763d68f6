/**
 * The floor of `agentshelf publish`: a bare aws4fetch PUT loop over the same tree, with the
 * same parallelism, and nothing else (no listing, no digests, no metadata, no order): the
 * objects `publish` uploads but the extensionless brand copies (the siblings of the feeds, not
 * those of the small files; src/publish/manifest.ts, hasBucketSiblings).
 * Usage: node publish-floor.js ENDPOINT BUCKET ROOT CONCURRENCY; prints {objects, bytes, ms}.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AwsClient } from 'aws4fetch';
import { hasBucketSiblings, siblingOf } from '../src/publish/manifest.js';

const [endpoint, bucket, root, concurrency] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
];
const client = new AwsClient({
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
  service: 's3',
  region: 'us-east-1',
  retries: 0,
});

function walk(dir: string, prefix: string, out: string[]): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || (!prefix && (e.name.startsWith('_') || e.name === 'cdn')))
      continue;
    const key = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) walk(path.join(dir, e.name), key, out);
    else if (!siblingOf(key) || hasBucketSiblings(siblingOf(key)!.plain)) out.push(key);
  }
  return out;
}

const keys = walk(root, '', []);
const started = performance.now();
let next = 0;
let bytes = 0;
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      const body = await fs.promises.readFile(path.join(root, key));
      const res = await client.fetch(`${endpoint}/${bucket}/${key}`, { method: 'PUT', body });
      if (res.status !== 200) throw new Error(`PUT ${key}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
      bytes += body.length;
    }
  }),
);
console.log(JSON.stringify({ objects: keys.length, bytes, ms: performance.now() - started }));
