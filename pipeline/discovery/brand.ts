import type { Db } from '../../src/db/store.js';
import { streamBrandProducts } from '../../src/db/queries/discovery.js';
import {
  ACP_VERSION,
  toAcpProduct,
  toAcpVariant,
  type AcpProduct,
  type AcpVariant,
} from '../../src/domain/discovery/acp.js';
import { brandFiles, brandUrls } from '../../src/domain/discovery/layout.js';
import { readCatalogueProduct } from '../../src/domain/catalogue/product.js';
import type { OpenFile, PublishFileOptions, Publisher } from '../../src/publish/publisher.js';
import { PAGE_PRODUCT_LIMIT, renderBrandPage, type PriceRange } from './html.js';

/** A brand to (re)publish, decided before anything is written. */
export interface BrandPlan {
  name: string;
  slug: string;
  productCount: number;
  updatedAt: string;
  /** The store's brand also holds the products that carry no brand. */
  includeUnbranded: boolean;
}

export interface BrandSettings {
  /** Where the registry is published (keys relative to PUBLIC_DIR). */
  publisher: Publisher;
  feedsUrl: string;
  sellerName: string;
}

/** Feeds are large: brotli 4 compresses about as fast as gzip 6 and a quarter smaller. */
export const FEED_FILE: PublishFileOptions = {
  contentType: 'application/json; charset=utf-8',
  gzip: true,
  brotli: true,
  brotliQuality: 4,
};
/** Small files are fetched often: a little more effort for smaller transfers. */
export const SMALL_FILE: PublishFileOptions = {
  gzip: true,
  gzipLevel: 9,
  brotli: true,
  brotliQuality: 6,
};

const FLUSH_AT = 64 * 1024;

/**
 * The files of one brand, written while its products stream in: the two feeds grow line by
 * line (only a 64 KiB buffer each is held), the page keeps the first products it shows, the
 * brand JSON sums up. `commit()` puts them in place, feeds first, the brand JSON that names
 * them last; nothing of the brand is replaced when any part fails.
 */
export class BrandBuild {
  readonly files: ReturnType<typeof brandFiles>;
  private readonly ndjson: OpenFile;
  private readonly json: OpenFile;
  private ndjsonBuf = '';
  private jsonBuf = '';
  private first = true;
  private productCount = 0;
  private acpProductCount = 0;
  private readonly categories = new Set<string>();
  private readonly prices = new Map<string, PriceRange>();
  private readonly shown: AcpProduct[] = [];

  constructor(
    readonly plan: BrandPlan,
    private readonly settings: BrandSettings,
  ) {
    this.files = brandFiles(plan.slug);
    this.ndjson = settings.publisher.open(this.files.feedNdjson, {
      ...FEED_FILE,
      contentType: 'application/x-ndjson; charset=utf-8',
    });
    this.json = settings.publisher.open(this.files.feedJson, FEED_FILE);
    this.jsonBuf = `{"metadata":${JSON.stringify({ id: plan.slug, updated_at: plan.updatedAt })},"products":[`;
  }

  /** Streams the brand's products from the reader into the feeds. */
  async fill(reader: Db): Promise<void> {
    let key: string | undefined;
    let variants: AcpVariant[] = [];
    for await (const row of streamBrandProducts(
      reader,
      this.plan.name,
      this.plan.includeUnbranded,
    )) {
      const group = String(row.group_key);
      if (group !== key) {
        if (key !== undefined) await this.add(toAcpProduct(key, variants));
        key = group;
        variants = [];
      }
      const product = readCatalogueProduct(row, { storeName: this.settings.sellerName });
      const variant = toAcpVariant(product, this.settings.sellerName);
      variants.push(variant);
      this.tally(variant);
    }
    if (key !== undefined) await this.add(toAcpProduct(key, variants));
  }

  private tally(v: AcpVariant): void {
    this.productCount++;
    if (v.categories) this.categories.add(v.categories[0]!.value);
    const r = this.prices.get(v.price.currency);
    if (!r) {
      this.prices.set(v.price.currency, {
        currency: v.price.currency,
        min: v.price.amount,
        max: v.price.amount,
      });
    } else {
      if (v.price.amount < r.min) r.min = v.price.amount;
      if (v.price.amount > r.max) r.max = v.price.amount;
    }
  }

  private async add(product: AcpProduct): Promise<void> {
    this.acpProductCount++;
    if (this.shown.length < PAGE_PRODUCT_LIMIT) this.shown.push(product);
    const line = JSON.stringify(product);
    this.ndjsonBuf += `${line}\n`;
    this.jsonBuf += this.first ? `\n${line}` : `,\n${line}`;
    this.first = false;
    if (this.ndjsonBuf.length >= FLUSH_AT) await this.flush();
  }

  private async flush(): Promise<void> {
    const a = this.ndjson.write(this.ndjsonBuf);
    const b = this.json.write(this.jsonBuf);
    this.ndjsonBuf = '';
    this.jsonBuf = '';
    if (a) await a;
    if (b) await b;
  }

  /** Finishes the feeds and writes the page and brand JSON; returns the files replaced. */
  async commit(): Promise<string[]> {
    this.jsonBuf += '\n]}\n';
    await this.flush();
    const { publisher, feedsUrl } = this.settings;
    const urls = brandUrls(feedsUrl, this.plan.slug);
    const categories = [...this.categories].sort();
    const priceRanges = [...this.prices.values()].sort((a, b) =>
      a.currency < b.currency ? -1 : 1,
    );
    const brand = {
      acp_version: ACP_VERSION,
      slug: this.plan.slug,
      name: this.plan.name,
      product_count: this.productCount,
      acp_product_count: this.acpProductCount,
      updated_at: this.plan.updatedAt,
      categories,
      price_ranges: priceRanges,
      ...urls,
    };
    const pageHtml = renderBrandPage({
      name: this.plan.name,
      slug: this.plan.slug,
      productCount: this.productCount,
      acpProductCount: this.acpProductCount,
      updatedAt: this.plan.updatedAt,
      categories,
      priceRanges,
      urls,
      homeUrl: `${feedsUrl}/`,
      products: this.shown,
    });
    const changed: string[] = [];
    const note = (r: { changed: boolean }, file: string) => {
      if (r.changed) changed.push(file);
    };
    note(await this.ndjson.commit(), this.files.feedNdjson);
    note(await this.json.commit(), this.files.feedJson);
    note(
      await publisher.write(this.files.page, pageHtml, {
        ...SMALL_FILE,
        contentType: 'text/html; charset=utf-8',
      }),
      this.files.page,
    );
    note(
      await publisher.write(this.files.json, `${JSON.stringify(brand)}\n`, {
        ...SMALL_FILE,
        contentType: 'application/json; charset=utf-8',
      }),
      this.files.json,
    );
    return changed;
  }

  /** Drops the temporary files; what was published stays. */
  async abort(): Promise<void> {
    await Promise.all([this.ndjson.abort(), this.json.abort()]);
  }

  /** Products streamed so far (for progress). */
  get count(): number {
    return this.productCount;
  }
}
