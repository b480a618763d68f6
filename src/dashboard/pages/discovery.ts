import fs from 'node:fs';
import path from 'node:path';
import { PUBLISHED_MARKER } from '../../domain/discovery/layout.js';
import { listPublications } from '../../domain/publications/publications.js';
import { markup, type Html } from '../../markup.js';
import { csrfField, table } from '../layout.js';
import { canWrite, queryOf, type DashContext, type DashRoute } from '../route.js';

const PATH = '/dashboard/discovery';

interface PublishedBrand {
  slug: string;
  name: string;
  product_count: number;
  updated_at: string;
  html_url: string;
  feeds: { json: string; ndjson: string };
}

/** Parsed files by path, kept while their size and mtime hold (the index is replaced whole). */
const parsed = new Map<string, { stamp: string; value: unknown }>();

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    const stat = await fs.promises.stat(file);
    const stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    const hit = parsed.get(file);
    if (hit?.stamp === stamp) return hit.value as T;
    const value = JSON.parse(await fs.promises.readFile(file, 'utf8')) as T;
    if (parsed.size > 20) parsed.clear();
    parsed.set(file, { stamp, value });
    return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) {
      return undefined;
    }
    throw err;
  }
}

const BRANDS_PER_PAGE = 50;
const PUBLICATIONS_SHOWN = 10;

/** The last uploads to PUBLISH_TARGET, failures and failed purges in words. */
async function publicationsSection(dash: DashContext): Promise<Html | ''> {
  if (!dash.deps.config.PUBLISH_TARGET) return '';
  const { publications } = await listPublications(
    dash.deps.db,
    {},
    { limit: PUBLICATIONS_SHOWN, offset: 0 },
  );
  const purge = (p: (typeof publications)[number]) =>
    p.purge_status === null
      ? '-'
      : markup`${p.purge_status}${p.purge_error ? markup`: ${p.purge_error}` : ''}`;
  return markup`<h2>Publications to object storage</h2>
    ${
      publications.length === 0
        ? markup`<div class="box"><p>No upload yet: the next pipeline run publishes.</p></div>`
        : table(
            [
              'Started',
              'Status',
              'Uploaded',
              'Unchanged',
              'Deleted',
              'Bytes',
              'CDN purge',
              'Error',
            ],
            publications.map((p) => [
              dash.fmt.when(p.started_at),
              p.status,
              dash.fmt.number(p.uploaded),
              dash.fmt.number(p.skipped),
              dash.fmt.number(p.deleted),
              dash.fmt.number(p.bytes),
              purge(p),
              p.error ?? '',
            ]),
          )
    }`;
}

async function renderDiscovery(
  dash: DashContext,
  offsetText: string | undefined,
  notice?: string,
): Promise<void> {
  const { config } = dash.deps;
  const root = config.PUBLIC_DIR;
  const index = await readJson<{ brands?: PublishedBrand[] }>(path.join(root, 'v1', 'index.json'));
  const marker = await readJson<{ published_at?: string }>(path.join(root, PUBLISHED_MARKER));
  const all = index?.brands ?? [];
  const offset = Math.max(0, Math.min(Number.parseInt(offsetText ?? '0', 10) || 0, all.length));
  const brands = all.slice(offset, offset + BRANDS_PER_PAGE);
  const link = (o: number) => `${PATH}?offset=${Math.max(0, o)}`;
  const uploads = await publicationsSection(dash);
  dash.render(
    'Discovery',
    PATH,
    markup`${notice ? markup`<div class="notice" role="status">${notice}</div>` : ''}
      <div class="box">
        <p>
          AI agents find your catalogue through the published discovery tree at
          <a href="${config.FEEDS_URL}/">${config.FEEDS_URL}/</a> (registry:
          <a href="${config.FEEDS_URL}/v1/index.json">${config.FEEDS_URL}/v1/index.json</a>).
        </p>
        <p>
          Last published: <strong>${dash.fmt.when(marker?.published_at, 'never')}</strong>. The pipeline
          republishes on its schedule and a few seconds after products or feeds change.
        </p>
        ${
          canWrite(dash.viewer)
            ? markup`<form method="post" action="${PATH}/publish">
                ${csrfField(dash.viewer)}<button type="submit">Publish now</button>
              </form>`
            : ''
        }
      </div>
      <h2>Published brands</h2>
      ${
        brands.length === 0
          ? markup`<div class="box">
              <p>
                Nothing is published yet. Add active products with a brand (attribute
                <code>brand</code>), then publish.
              </p>
            </div>`
          : table(
              ['Brand', 'Products', 'Updated', 'Feeds'],
              brands.map((b) => [
                markup`<a href="${b.html_url}">${b.name}</a>`,
                dash.fmt.number(b.product_count),
                dash.fmt.when(b.updated_at),
                markup`<a href="${b.feeds.json}">JSON</a> · <a href="${b.feeds.ndjson}">NDJSON</a>`,
              ]),
            )
      }
      <div class="pager">
        <span>${all.length === 0 ? '' : `${offset + 1}–${offset + brands.length} of ${all.length} brands`}</span>
        ${offset > 0 ? markup`<a href="${link(offset - BRANDS_PER_PAGE)}">Previous</a>` : ''}
        ${offset + BRANDS_PER_PAGE < all.length ? markup`<a href="${link(offset + BRANDS_PER_PAGE)}">Next</a>` : ''}
      </div>
      ${uploads}`,
  );
}

export const discoveryPages: DashRoute[] = [
  {
    method: 'get',
    path: PATH,
    permission: 'read',
    handler: (ctx, dash) => renderDiscovery(dash, queryOf(ctx).offset),
  },
  {
    method: 'post',
    path: `${PATH}/publish`,
    permission: 'write',
    handler: async (_ctx, dash) => {
      dash.publish('dashboard');
      await renderDiscovery(
        dash,
        undefined,
        'Publication requested: the pipeline runs in a few seconds. Reload this page to see the new time.',
      );
    },
  },
];
