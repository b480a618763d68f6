import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Db } from '../../src/db/store.js';
import { ProductCreate } from '../../src/domain/products/schemas.js';
import { createProduct } from '../../src/domain/products/products.js';

/** The repository's root (tests run from build/test/...). */
export function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
}

// RFC 3986 characters of an absolute URI: a scheme, then only unreserved, reserved and
// percent-encoded characters (no spaces, quotes, angle brackets or braces).
export const URI =
  /^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#[\]]|%[0-9A-Fa-f]{2})*$/;

/** ajv (JSON Schema 2020-12) validating against vendor/acp/schema.feed.json#/$defs/Product. */
export function loadAcpProductValidator() {
  const file = path.join(repoRoot(), 'vendor', 'acp', 'schema.feed.json');
  const schema = JSON.parse(fs.readFileSync(file, 'utf8')) as { $id: string };
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  ajv.addKeyword('example');
  ajv.addFormat('uri', URI);
  ajv.addFormat(
    'date-time',
    (s: string) => !Number.isNaN(Date.parse(s)) && /T.*(Z|[+-]\d\d:\d\d)$/.test(s),
  );
  ajv.addSchema(schema);
  const validate = ajv.getSchema(`${schema.$id}#/$defs/Product`);
  if (!validate) throw new Error('no $defs/Product in the ACP schema');
  return validate;
}

/** Creates a product the way the API does (validated input, event in the same transaction). */
export async function addProduct(
  db: Db,
  input: Record<string, unknown>,
  now: Date = new Date(),
): Promise<string> {
  const product = await createProduct(
    db,
    ProductCreate.parse({
      price: 10,
      images: ['https://img.example.com/a.jpg'],
      ...input,
    }),
    { currency: 'USD' },
    now,
  );
  return product.id;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Sends a request line exactly as given (fetch and http.request would normalise `..` or
 * refuse odd bytes) and reads the whole answer.
 */
export function rawRequest(
  url: string,
  target: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split).toString('latin1').split('\r\n');
      const status = Number(head[0]!.split(' ')[1]);
      const h: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        h[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status, headers: h, body: all.subarray(split + 4) });
    });
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(
      `${method} ${target} HTTP/1.1\r\nHost: ${hostname}\r\n${extra}Connection: close\r\n\r\n`,
    );
  });
}

/** Every file under a directory, relative, with its inode, size and bytes. */
export function snapshotTree(root: string): Map<string, { ino: number; bytes: Buffer }> {
  const out = new Map<string, { ino: number; bytes: Buffer }>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else
        out.set(path.relative(root, full), {
          ino: fs.statSync(full).ino,
          bytes: fs.readFileSync(full),
        });
    }
  };
  walk(root);
  return out;
}

/** Files added, removed or replaced between two snapshots. */
export function diffTrees(
  before: Map<string, { ino: number; bytes: Buffer }>,
  after: Map<string, { ino: number; bytes: Buffer }>,
): string[] {
  const changed = new Set<string>();
  for (const [f, a] of after) {
    const b = before.get(f);
    if (!b || b.ino !== a.ino || !b.bytes.equals(a.bytes)) changed.add(f);
  }
  for (const f of before.keys()) if (!after.has(f)) changed.add(f);
  return [...changed].sort();
}
