/**
 * The floor for the discovery build: a bare loop writing the same per-brand files (feeds with
 * their .gz/.br, brand JSON, page) from better-sqlite3's iterate(), with the same mapping and
 * compression, but no Kysely, no atomic publish, no hashing, no state and no index.
 */
import fs from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import SQLite from 'better-sqlite3';
import { PAGE_PRODUCT_LIMIT, renderBrandPage } from '../pipeline/discovery/html.js';
import { slugify } from '../src/domain/discovery/slug.js';
import { brandFiles, brandUrls } from '../src/domain/discovery/layout.js';
import {
  toAcpProduct,
  toAcpVariant,
  type AcpProduct,
  type AcpVariant,
} from '../src/domain/discovery/acp.js';
import { readCatalogueProduct, type CatalogueRow } from '../src/domain/catalogue/product.js';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

class Sink {
  private readonly streams: fs.WriteStream[] = [];
  private readonly inputs: NodeJS.WritableStream[] = [];
  constructor(file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const plain = fs.createWriteStream(file, { highWaterMark: 1 << 20 });
    const gz = zlib.createGzip({ level: 6 });
    const gzOut = fs.createWriteStream(`${file}.gz`, { highWaterMark: 1 << 20 });
    gz.pipe(gzOut);
    const br = zlib.createBrotliCompress({
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 },
    });
    const brOut = fs.createWriteStream(`${file}.br`, { highWaterMark: 1 << 20 });
    br.pipe(brOut);
    this.inputs.push(plain, gz, br);
    this.streams.push(plain, gzOut, brOut);
  }
  async write(chunk: string): Promise<void> {
    const buf = Buffer.from(chunk);
    const waits = this.inputs.filter((s) => !s.write(buf)).map((s) => once(s, 'drain'));
    if (waits.length) await Promise.all(waits);
  }
  async end(): Promise<void> {
    for (const s of this.inputs) s.end();
    await Promise.all(this.streams.map((s) => once(s, 'close')));
  }
}

async function writeSmall(file: string, content: string): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const buf = Buffer.from(content);
  const [gz, br] = await Promise.all([
    gzip(buf, { level: 9 }),
    brotli(buf, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 6 } }),
  ]);
  await Promise.all([
    fs.promises.writeFile(file, buf),
    fs.promises.writeFile(`${file}.gz`, gz),
    fs.promises.writeFile(`${file}.br`, br),
  ]);
}

/** Writes every brand's files under outDir; returns the number of products written. */
export async function buildFloor(
  dbFile: string,
  outDir: string,
  feedsUrl: string,
  seller: string,
): Promise<number> {
  const db = new SQLite(dbFile, { readonly: true });
  const brands = db
    .prepare(
      "select brand, count(*) as n, max(updated_at) as u from products where status = 'active' group by brand",
    )
    .all() as { brand: string; n: number; u: string }[];
  const stmt = db.prepare(
    `select id, name, description, price_minor, currency, status, category, images, attributes, created_at, updated_at,
       coalesce(json_extract(attributes, '$.item_group_id'), id) as group_key
     from products where status = 'active' and brand = ?
     order by coalesce(json_extract(attributes, '$.item_group_id'), id), id`,
  );
  let total = 0;
  const inflight = new Set<Promise<void>>();
  for (const b of brands) {
    const slug = slugify(b.brand);
    const f = brandFiles(slug);
    const ndjson = new Sink(path.join(outDir, f.feedNdjson));
    const json = new Sink(path.join(outDir, f.feedJson));
    let nd = '';
    let js = `{"metadata":${JSON.stringify({ id: slug, updated_at: b.u })},"products":[`;
    let first = true;
    const shown: AcpProduct[] = [];
    let key: string | undefined;
    let variants: AcpVariant[] = [];
    let acp = 0;
    const emit = async (p: AcpProduct) => {
      acp++;
      if (shown.length < PAGE_PRODUCT_LIMIT) shown.push(p);
      const line = JSON.stringify(p);
      nd += `${line}\n`;
      js += first ? `\n${line}` : `,\n${line}`;
      first = false;
      if (nd.length >= 64 * 1024) {
        await Promise.all([ndjson.write(nd), json.write(js)]);
        nd = '';
        js = '';
      }
    };
    for (const row of stmt.iterate(b.brand) as Iterable<CatalogueRow & { group_key: string }>) {
      const group = String(row.group_key);
      if (group !== key) {
        if (key !== undefined) await emit(toAcpProduct(key, variants));
        key = group;
        variants = [];
      }
      variants.push(toAcpVariant(readCatalogueProduct(row, { storeName: seller }), seller));
      total++;
    }
    if (key !== undefined) await emit(toAcpProduct(key, variants));
    js += '\n]}\n';
    await Promise.all([ndjson.write(nd), json.write(js)]);
    const urls = brandUrls(feedsUrl, slug);
    const done = (async () => {
      await Promise.all([ndjson.end(), json.end()]);
      const page = renderBrandPage({
        name: b.brand,
        slug,
        productCount: b.n,
        acpProductCount: acp,
        updatedAt: b.u,
        categories: [],
        priceRanges: [],
        urls,
        homeUrl: `${feedsUrl}/`,
        products: shown,
      });
      await writeSmall(path.join(outDir, f.page), page);
      await writeSmall(
        path.join(outDir, f.json),
        `${JSON.stringify({ slug, name: b.brand, product_count: b.n, ...urls })}\n`,
      );
    })();
    inflight.add(done);
    void done.finally(() => inflight.delete(done));
    while (inflight.size >= 4) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  db.close();
  return total;
}
