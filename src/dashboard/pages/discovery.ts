import fs from 'node:fs';
import path from 'node:path';
import { PUBLISHED_MARKER } from '../../domain/discovery/layout.js';
import { MCP_PATH } from '../../domain/ucp/profile.js';
import { listPublications, PURGE_ATTEMPTS } from '../../domain/publications/publications.js';
import { PUBLICATION_STATUSES } from '../../domain/publications/schemas.js';
import { PublicationListQueryString } from '../../http/schemas/publications.js';
import { parseInput } from '../../http/validate.js';
import { markup, type Html } from '../../markup.js';
import { csrfField, field, listPager, pageLink, pager, table } from '../layout.js';
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

/** The uploads to PUBLISH_TARGET, newest first, by state and paged; failures in words. */
async function publicationsSection(
  dash: DashContext,
  query: Record<string, string>,
): Promise<Html | ''> {
  if (!dash.deps.config.PUBLISH_TARGET) return '';
  const given: Record<string, string> = { limit: String(PUBLICATIONS_SHOWN) };
  if (query.publications_status) given.status = query.publications_status;
  if (query.publications_offset) given.offset = query.publications_offset;
  const { limit, offset, ...filter } = parseInput(PublicationListQueryString, given, 'query');
  const { publications, pagination } = await listPublications(dash.deps.db, filter, {
    limit,
    offset,
  });
  const kept: Record<string, string> = filter.status ? { publications_status: filter.status } : {};
  const link = (at: number) => pageLink(PATH, kept, at, '#publications', 'publications_offset');
  const purge = (p: (typeof publications)[number]) =>
    p.purge_status === null
      ? '-'
      : markup`${p.purge_status}${p.purge_attempts > 1 ? ` (${p.purge_attempts} attempts)` : ''}${p.purge_error ? markup`: ${p.purge_error}` : ''}`;
  return markup`<h2 id="publications">Publications to object storage</h2>
    <p class="muted">
      A failed upload is made good by the next run (Publish now, above); a failed CDN purge is
      tried again by itself, up to ${PURGE_ATTEMPTS} times.
    </p>
    <form class="box filters" method="get" action="${PATH}#publications">
      <div>
        ${field({ name: 'publications_status', label: 'State', value: filter.status ?? '', options: ['', ...PUBLICATION_STATUSES] })}
      </div>
      <div><button type="submit">Show</button></div>
    </form>
    ${
      publications.length === 0
        ? markup`<div class="box">
            <p>
              ${filter.status ? 'No publication in this state.' : 'No upload yet: the next pipeline run publishes.'}
            </p>
          </div>`
        : table(
            ['Started', 'Status', 'Uploaded', 'Unchanged', 'Deleted', 'Size', 'CDN purge', 'Error'],
            publications.map((p) => [
              dash.fmt.when(p.started_at),
              p.status,
              dash.fmt.number(p.uploaded),
              dash.fmt.number(p.skipped),
              dash.fmt.number(p.deleted),
              dash.fmt.bytes(p.bytes),
              purge(p),
              p.error ?? '',
            ]),
          )
    }
    ${listPager(pagination, { shown: publications.length, pageSize: PUBLICATIONS_SHOWN, link, fmt: dash.fmt })}`;
}

async function renderDiscovery(
  dash: DashContext,
  query: Record<string, string>,
  notice?: string,
): Promise<void> {
  const offsetText = query.offset;
  const { config } = dash.deps;
  const root = config.PUBLIC_DIR;
  const index = await readJson<{ brands?: PublishedBrand[] }>(path.join(root, 'v1', 'index.json'));
  const marker = await readJson<{ published_at?: string }>(path.join(root, PUBLISHED_MARKER));
  const all = index?.brands ?? [];
  const offset = Math.max(0, Math.min(Number.parseInt(offsetText ?? '0', 10) || 0, all.length));
  const brands = all.slice(offset, offset + BRANDS_PER_PAGE);
  const link = (o: number) => (o > 0 ? `${PATH}?offset=${o}` : PATH);
  const uploads = await publicationsSection(dash, query);
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
      <h2>The UCP catalog</h2>
      <div class="box">
        <p>
          Agents that speak the Universal Commerce Protocol find the store's profile at
          <a href="${config.FEEDS_URL}/.well-known/ucp">${config.FEEDS_URL}/.well-known/ucp</a>
          and search the catalog over REST (<code>${config.FEEDS_URL}/ucp/catalog/search</code>)
          or MCP (<code>${config.FEEDS_URL}${MCP_PATH}</code>), without downloading a feed.
        </p>
        <p>
          <a href="/dashboard/analytics#searches">What agents searched for, and what they did not find</a>
        </p>
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
      ${pager({
        offset,
        shown: brands.length,
        total: all.length,
        pageSize: BRANDS_PER_PAGE,
        hasMore: offset + brands.length < all.length,
        link,
        count: (n) => dash.fmt.number(n),
      })}
      ${uploads}`,
  );
}

export const discoveryPages: DashRoute[] = [
  {
    method: 'get',
    path: PATH,
    permission: 'read',
    handler: (ctx, dash) => renderDiscovery(dash, queryOf(ctx)),
  },
  {
    method: 'post',
    path: `${PATH}/publish`,
    permission: 'write',
    handler: async (_ctx, dash) => {
      dash.publish('dashboard');
      await renderDiscovery(
        dash,
        {},
        'Publication requested: the pipeline runs in a few seconds. Reload this page to see the new time.',
      );
    },
  },
];
