/**
 * The registry's pages for people: a brand page and the home page. Every value is escaped
 * for where it lands (text, attribute, JSON-LD), so a product named
 * `<script>alert(1)</script>` shows as text and cannot break out of the JSON-LD block.
 */
import { formatMinorUnits } from '../../src/domain/money.js';
import { ACP_VERSION, type AcpProduct, type AcpVariant } from '../../src/domain/discovery/acp.js';
import { join, jsonForScript, markup, raw, type Html } from '../../src/markup.js';

const formatters = new Map<string, Intl.NumberFormat>();

/** A price for people: minor units in the currency's own format ("$79.99", "¥500"). */
export function formatPrice(amount: number, currency: string): string {
  let f = formatters.get(currency);
  if (!f) {
    try {
      f = new Intl.NumberFormat('en-US', { style: 'currency', currency });
    } catch {
      f = new Intl.NumberFormat('en-US', { minimumFractionDigits: 0 });
    }
    formatters.set(currency, f);
  }
  const decimal = formatMinorUnits(amount, currency);
  const shown = f.format(Number(decimal));
  return f.resolvedOptions().style === 'currency' ? shown : `${shown} ${currency}`;
}

export interface PriceRange {
  currency: string;
  min: number;
  max: number;
}

export interface BrandPage {
  name: string;
  slug: string;
  productCount: number;
  updatedAt: string;
  categories: string[];
  priceRanges: PriceRange[];
  urls: { url: string; html_url: string; feeds: { json: string; ndjson: string } };
  homeUrl: string;
  /** The first products of the brand (the page shows at most PAGE_PRODUCT_LIMIT). */
  products: AcpProduct[];
  /** ACP Products of the brand in all. */
  acpProductCount: number;
}

/** Products a brand page lists; the feeds carry every one. */
export const PAGE_PRODUCT_LIMIT = 200;

const STYLE = `
:root{color-scheme:light dark;--fg:#1d1d1f;--muted:#5f6368;--line:#e3e3e6;--card:#fff;--bg:#f6f6f8;--accent:#0b57d0}
@media (prefers-color-scheme:dark){:root{--fg:#ececf1;--muted:#a1a1aa;--line:#2e2e35;--card:#1b1b20;--bg:#111114;--accent:#8ab4f8}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}header,main,footer{max-width:1120px;margin:0 auto;padding:24px}
nav{font-size:14px;color:var(--muted)}h1{font-size:32px;margin:8px 0}
.meta{color:var(--muted);margin:0 0 12px}.feeds a{margin-right:12px;font-size:14px}
.chips{list-style:none;padding:0;margin:12px 0 0;display:flex;flex-wrap:wrap;gap:8px}
.chips li{border:1px solid var(--line);border-radius:999px;padding:2px 10px;font-size:13px;color:var(--muted)}
.grid{list-style:none;padding:0;margin:0;display:grid;gap:16px;grid-template-columns:repeat(auto-fill,minmax(220px,1fr))}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;overflow:hidden;display:flex;flex-direction:column}
.card img{width:100%;aspect-ratio:1;object-fit:cover;background:var(--line);display:block}
.card .noimg{width:100%;aspect-ratio:1;background:var(--line)}
.card div{padding:12px 14px 16px}.card h2{font-size:16px;margin:0 0 6px}.card h2 a{color:inherit;text-decoration:none}
.price{font-weight:600;margin:0}.cat,.opts{font-size:13px;color:var(--muted);margin:4px 0 0}
.out{color:#b3261e}.more{color:var(--muted)}
table{width:100%;border-collapse:collapse;background:var(--card)}th,td{text-align:left;padding:8px 12px;border-bottom:1px solid var(--line)}
td.n{text-align:right;font-variant-numeric:tabular-nums}footer{color:var(--muted);font-size:13px}
`;

function priceLabel(variants: AcpVariant[]): string {
  const byCurrency = new Map<string, { min: number; max: number }>();
  for (const v of variants) {
    const r = byCurrency.get(v.price.currency);
    if (!r) byCurrency.set(v.price.currency, { min: v.price.amount, max: v.price.amount });
    else {
      r.min = Math.min(r.min, v.price.amount);
      r.max = Math.max(r.max, v.price.amount);
    }
  }
  return [...byCurrency]
    .map(([currency, r]) =>
      r.min === r.max
        ? formatPrice(r.min, currency)
        : `${formatPrice(r.min, currency)} – ${formatPrice(r.max, currency)}`,
    )
    .join(' · ');
}

function optionsLabel(variants: AcpVariant[]): string {
  if (variants.length < 2) return '';
  const values = new Map<string, Set<string>>();
  for (const v of variants) {
    for (const o of v.variant_options ?? []) {
      let set = values.get(o.name);
      if (!set) values.set(o.name, (set = new Set()));
      set.add(o.value);
    }
  }
  const parts = [...values].map(([name, set]) => `${name}: ${[...set].join(', ')}`);
  return parts.length ? parts.join(' · ') : `${variants.length} variants`;
}

function productCard(p: AcpProduct): Html {
  const image = p.media?.[0];
  const href = p.url ?? p.variants.find((v) => v.url)?.url;
  const category = p.variants[0]?.categories?.[0]?.value;
  const available = p.variants.some((v) => v.availability.available);
  const options = optionsLabel(p.variants);
  return markup`<li class="card" id="p-${p.id}">${
    image
      ? markup`<img src="${image.url}" alt="${image.alt_text ?? p.title}" loading="lazy" width="320" height="320">`
      : markup`<span class="noimg"></span>`
  }<div><h2>${href ? markup`<a href="${href}">${p.title}</a>` : p.title}</h2><p class="price">${priceLabel(p.variants)}</p>${
    category ? markup`<p class="cat">${category}</p>` : ''
  }${options ? markup`<p class="opts">${options}</p>` : ''}${
    available ? '' : markup`<p class="opts out">Out of stock</p>`
  }</div></li>`;
}

const SCHEMA_AVAILABILITY: Record<string, string> = {
  in_stock: 'https://schema.org/InStock',
  out_of_stock: 'https://schema.org/OutOfStock',
  preorder: 'https://schema.org/PreOrder',
  backorder: 'https://schema.org/BackOrder',
};

function offerOf(v: AcpVariant): Record<string, unknown> {
  return {
    '@type': 'Offer',
    price: formatMinorUnits(v.price.amount, v.price.currency),
    priceCurrency: v.price.currency,
    availability: SCHEMA_AVAILABILITY[v.availability.status] ?? 'https://schema.org/InStock',
    ...(v.url ? { url: v.url } : {}),
  };
}

function schemaProduct(v: AcpVariant, brand: string): Record<string, unknown> {
  const gtin = v.barcodes?.find((b) => b.type === 'GTIN')?.value;
  return {
    '@type': 'Product',
    name: v.title,
    sku: v.id,
    ...(v.description ? { description: v.description.plain } : {}),
    ...(v.media ? { image: v.media.map((m) => m.url) } : {}),
    ...(v.categories ? { category: v.categories[0]!.value } : {}),
    ...(gtin ? { gtin } : {}),
    ...(v.url ? { url: v.url } : {}),
    brand: { '@type': 'Brand', name: brand },
    offers: offerOf(v),
  };
}

function schemaItem(p: AcpProduct, brand: string): Record<string, unknown> {
  if (p.variants.length === 1) return schemaProduct(p.variants[0]!, brand);
  return {
    '@type': 'ProductGroup',
    name: p.title,
    productGroupID: p.id,
    ...(p.description ? { description: p.description.plain } : {}),
    ...(p.media ? { image: p.media.map((m) => m.url) } : {}),
    ...(p.url ? { url: p.url } : {}),
    brand: { '@type': 'Brand', name: brand },
    hasVariant: p.variants.map((v) => schemaProduct(v, brand)),
  };
}

function page(title: string, head: Html, body: Html): string {
  return markup`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${head}
<style>${raw(STYLE)}</style>
</head>
<body>
${body}
<footer>Published by agentshelf as an Agentic Commerce Protocol registry (ACP ${ACP_VERSION}).</footer>
</body>
</html>
`.value;
}

/** The date of an ISO time, as pages show it and the sitemap dates them. */
export function dateOf(iso: string): string {
  return iso.slice(0, 10);
}

export function renderBrandPage(b: BrandPage): string {
  const shown = b.products.slice(0, PAGE_PRODUCT_LIMIT);
  const jsonLd = {
    '@context': 'https://schema.org',
    '@graph': [
      { '@type': 'Brand', name: b.name, url: b.urls.html_url },
      {
        '@type': 'ItemList',
        name: `${b.name} products`,
        numberOfItems: b.acpProductCount,
        itemListElement: shown.map((p, i) => ({
          '@type': 'ListItem',
          position: i + 1,
          item: schemaItem(p, b.name),
        })),
      },
    ],
  };
  const prices = b.priceRanges
    .map((r) =>
      r.min === r.max
        ? formatPrice(r.min, r.currency)
        : `${formatPrice(r.min, r.currency)} to ${formatPrice(r.max, r.currency)}`,
    )
    .join(', ');
  const description = `${b.name}: ${b.productCount} products${prices ? `, ${prices}` : ''}.`;
  const head = markup`<meta name="description" content="${description}">
<link rel="canonical" href="${b.urls.html_url}">
<link rel="alternate" type="application/json" href="${b.urls.url}">
<script type="application/ld+json">${jsonForScript(jsonLd)}</script>`;
  const more =
    b.acpProductCount > shown.length
      ? markup`<p class="more">Showing ${shown.length} of ${b.acpProductCount} products. The <a href="${b.urls.feeds.json}">feed</a> lists them all.</p>`
      : '';
  const body = markup`<header>
<nav><a href="${b.homeUrl}">All brands</a> › ${b.name}</nav>
<h1>${b.name}</h1>
<p class="meta">${b.productCount} ${b.productCount === 1 ? 'product' : 'products'}${prices ? markup` · ${prices}` : ''} · updated ${dateOf(b.updatedAt)}</p>
<p class="feeds"><a href="${b.urls.feeds.json}">ACP feed (JSON)</a><a href="${b.urls.feeds.ndjson}">ACP feed (NDJSON)</a><a href="${b.urls.url}">Brand details (JSON)</a></p>
${b.categories.length ? markup`<ul class="chips">${b.categories.map((c) => markup`<li>${c}</li>`)}</ul>` : ''}
</header>
<main>
<ul class="grid">
${join(shown.map(productCard), '\n')}
</ul>
${more}
</main>`;
  return page(`${b.name} · ${b.productCount} products`, head, body);
}

export interface HomeEntry {
  name: string;
  product_count: number;
  updated_at: string;
  html_url: string;
  feeds: { json: string; ndjson: string };
}

export function renderHomePage(options: {
  storeName: string;
  indexUrl: string;
  brands: HomeEntry[];
}): string {
  const total = options.brands.reduce((n, b) => n + b.product_count, 0);
  const rows = options.brands.map(
    (b) =>
      markup`<tr><td><a href="${b.html_url}">${b.name}</a></td><td class="n">${b.product_count}</td><td>${dateOf(b.updated_at)}</td><td><a href="${b.feeds.json}">JSON</a> · <a href="${b.feeds.ndjson}">NDJSON</a></td></tr>`,
  );
  const title = `${options.storeName} · product registry`;
  const head = markup`<meta name="description" content="${`${options.brands.length} brands and ${total} products as Agentic Commerce Protocol feeds.`}">
<link rel="alternate" type="application/json" href="${options.indexUrl}">`;
  const body = markup`<header>
<h1>${options.storeName}</h1>
<p class="meta">${options.brands.length} ${options.brands.length === 1 ? 'brand' : 'brands'} · ${total} products, published as Agentic Commerce Protocol feeds for AI shopping agents.</p>
<p class="feeds">Agents start at <a href="${options.indexUrl}">${options.indexUrl}</a>.</p>
</header>
<main>
${
  options.brands.length
    ? markup`<table>
<thead><tr><th>Brand</th><th>Products</th><th>Updated</th><th>Feeds</th></tr></thead>
<tbody>
${join(rows, '\n')}
</tbody>
</table>`
    : markup`<p class="more">No products are published yet.</p>`
}
</main>`;
  return page(title, head, body);
}
