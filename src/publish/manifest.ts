import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FsPublisher } from './fs.js';

/**
 * The manifest of a published tree: for each file (compressed siblings included), its size,
 * MD5 (an object store's ETag), SHA-256, content type and encoding. It is filled while the
 * files are written (FsPublisher's `digests`) and kept in a file beside the store; a file the
 * manifest does not know, or whose size or modification time changed since (edited by hand,
 * written before the target was set), is hashed once from disk.
 */

export interface ManifestEntry {
  size: number;
  mtimeMs: number;
  md5: string;
  sha256: string;
  contentType: string;
  /** `gzip` or `br` for a compressed sibling (`x.json.gz` holds `x.json` compressed). */
  encoding?: 'gzip' | 'br' | undefined;
}

export type Manifest = Map<string, ManifestEntry>;

const MANIFEST_VERSION = 1;

export async function loadManifest(file: string): Promise<Manifest> {
  try {
    const parsed = JSON.parse(await fs.promises.readFile(file, 'utf8')) as {
      version?: number;
      files?: Record<string, ManifestEntry>;
    };
    if (parsed.version !== MANIFEST_VERSION || !parsed.files) return new Map();
    return new Map(Object.entries(parsed.files));
  } catch {
    return new Map(); // none yet, or unreadable: every file is hashed again
  }
}

export async function saveManifest(file: string, manifest: Manifest): Promise<void> {
  const files = Object.fromEntries([...manifest].sort(([a], [b]) => (a < b ? -1 : 1)));
  const out = new FsPublisher(path.dirname(file));
  await out.write(path.basename(file), JSON.stringify({ version: MANIFEST_VERSION, files }), {
    gzip: false,
  });
}

/**
 * The files a bucket holds with precompressed `.gz` and `.br` siblings (PUBLISH_TARGET
 * `encodings=siblings`): the two feeds of each brand. They grow with the catalogue, past what a
 * CDN compresses on the fly (CloudFront stops at 10 MB), and are most of the bytes. Every other
 * file is small or bounded (a brand's JSON is under a kilobyte, a page shows at most 200
 * products): compressing it saves less than its two extra PUTs cost on every change, and the
 * CDN compresses it itself. The tree on disk keeps its siblings (`serve` and nginx use them);
 * the CloudFront function (cdn/cloudfront-function.js) and the CloudFront purge follow this.
 */
export const BUCKET_SIBLINGS = /^\/?v1\/feeds\/[^/]+\/products\.(json|ndjson)$/;

/** Whether the plain file `key` (or URL path) goes to a bucket with `.gz` and `.br` siblings. */
export function hasBucketSiblings(key: string): boolean {
  return BUCKET_SIBLINGS.test(key);
}

/** The encoding a sibling's name says, with the file it compresses. */
export function siblingOf(key: string): { plain: string; encoding: 'gzip' | 'br' } | undefined {
  if (key.endsWith('.gz')) return { plain: key.slice(0, -3), encoding: 'gzip' };
  if (key.endsWith('.br')) return { plain: key.slice(0, -3), encoding: 'br' };
  return undefined;
}

/**
 * The manifest of the tree under `root` as it is now: every file but hidden ones (temporaries,
 * the publication marker; `.well-known/` is published), with the entries of `known` reused where size and modification time
 * still match, and the rest hashed from disk. `typeOf` gives a plain file's content type.
 */
export async function scanTree(
  root: string,
  known: Manifest,
  typeOf: (key: string) => string,
): Promise<Manifest> {
  const found: { key: string; stat: fs.Stats }[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      // Hidden entries are ours (temporaries, the marker), but for /.well-known/ (the UCP profile).
      if (e.name.startsWith('.') && !(prefix === '' && e.name === '.well-known')) continue;
      const full = path.join(dir, e.name);
      const key = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(full, key);
      else if (e.isFile()) found.push({ key, stat: await fs.promises.stat(full) });
    }
  };
  await walk(root, '');
  const keys = new Set(found.map((f) => f.key));
  const manifest: Manifest = new Map();
  for (const { key, stat } of found) {
    const old = known.get(key);
    if (old && old.size === stat.size && old.mtimeMs === stat.mtimeMs) {
      manifest.set(key, old);
      continue;
    }
    const sibling = siblingOf(key);
    const isSibling = sibling !== undefined && keys.has(sibling.plain);
    const digests = await hashFile(path.join(root, key));
    manifest.set(key, {
      size: stat.size,
      mtimeMs: stat.mtimeMs,
      ...digests,
      contentType: old?.contentType ?? typeOf(isSibling ? sibling.plain : key),
      encoding: isSibling ? sibling.encoding : undefined,
    });
  }
  return manifest;
}

async function hashFile(file: string): Promise<{ md5: string; sha256: string }> {
  const md5 = createHash('md5');
  const sha256 = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
    md5.update(chunk as Buffer);
    sha256.update(chunk as Buffer);
  }
  return { md5: md5.digest('hex'), sha256: sha256.digest('hex') };
}
