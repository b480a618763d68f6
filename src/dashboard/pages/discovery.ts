import fs from 'node:fs';
import path from 'node:path';
import { PUBLISHED_MARKER } from '../../domain/discovery/layout.js';
import { markup } from '../html.js';
import { csrfField, table } from '../layout.js';
import { canWrite, type DashContext, type DashRoute } from '../app.js';

const PATH = '/dashboard/discovery';

interface PublishedBrand {
  slug: string;
  name: string;
  product_count: number;
  updated_at: string;
  html_url: string;
  feeds: { json: string; ndjson: string };
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fs.promises.readFile(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) {
      return undefined;
    }
    throw err;
  }
}

async function renderDiscovery(dash: DashContext, notice?: string): Promise<void> {
  const { config } = dash.deps;
  const root = config.PUBLIC_DIR;
  const index = await readJson<{ brands?: PublishedBrand[] }>(path.join(root, 'v1', 'index.json'));
  const marker = await readJson<{ published_at?: string }>(path.join(root, PUBLISHED_MARKER));
  const brands = index?.brands ?? [];
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
          Last published: <strong>${marker?.published_at ?? 'never'}</strong>. The pipeline
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
                b.product_count,
                b.updated_at,
                markup`<a href="${b.feeds.json}">JSON</a> · <a href="${b.feeds.ndjson}">NDJSON</a>`,
              ]),
            )
      }`,
  );
}

export const discoveryPages: DashRoute[] = [
  { method: 'get', path: PATH, permission: 'read', handler: (_ctx, dash) => renderDiscovery(dash) },
  {
    method: 'post',
    path: `${PATH}/publish`,
    permission: 'write',
    handler: async (_ctx, dash) => {
      dash.publish('dashboard');
      await renderDiscovery(
        dash,
        'Publication requested: the pipeline runs in a few seconds. Reload this page to see the new time.',
      );
    },
  },
];
