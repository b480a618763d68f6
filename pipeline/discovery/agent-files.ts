/**
 * The files agents look for at the root of the published tree (issue 23): the UCP business
 * profile at /.well-known/ucp, robots.txt (everything may be fetched; names the sitemap),
 * sitemap.xml (the home page and every brand page, sitemaps.org 0.9) and llms.txt (the store in
 * a few lines for language models, with links to the index, the brand feeds and the profile).
 * Written on every run through the publisher, which keeps a file whose bytes did not change.
 */
import { markup } from '../../src/markup.js';
import { ROOT_FILES } from '../../src/domain/discovery/policy.js';
import {
  MCP_PATH,
  PROFILE_PATH,
  REST_BASE_PATH,
  businessProfileJson,
  PROFILE_FILE,
} from '../../src/domain/ucp/profile.js';
import type { Publisher } from '../../src/publish/publisher.js';
import { dateOf } from './html.js';

/** A brand as the index lists it (what these files link to). */
export interface ListedBrand {
  name: string;
  product_count: number;
  updated_at: string;
  html_url: string;
  feeds: { json: string; ndjson: string };
}

export interface AgentFilesInput {
  feedsUrl: string;
  storeName: string;
  brands: readonly ListedBrand[];
}

export function renderRobotsTxt(feedsUrl: string): string {
  return [
    '# Written by the agentshelf pipeline: the registry is public, for agents and crawlers alike.',
    'User-agent: *',
    'Allow: /',
    '',
    `Sitemap: ${feedsUrl}/sitemap.xml`,
    '',
  ].join('\n');
}

/**
 * The home page and each brand's page, with the date each last changed (sitemaps.org 0.9, a W3C
 * date): the date the page shows as "updated", so the sitemap changes when a page's date does,
 * not on every price change (a new object in the bucket and a purge each time).
 */
export function renderSitemap(input: AgentFilesInput): string {
  const newest = input.brands.reduce<string | undefined>(
    (max, b) => (max === undefined || b.updated_at > max ? b.updated_at : max),
    undefined,
  );
  const url = (loc: string, lastmod: string | undefined) =>
    markup`  <url><loc>${loc}</loc>${lastmod ? markup`<lastmod>${dateOf(lastmod)}</lastmod>` : ''}</url>\n`;
  return String(markup`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${url(`${input.feedsUrl}/`, newest)}${input.brands.map((b) => url(b.html_url, b.updated_at))}</urlset>
`);
}

/** Text for a Markdown link's label: one line, its brackets and backslashes escaped. */
function label(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/[\\[\]]/g, (c) => `\\${c}`);
}

/** The store in a few lines for language models (llmstxt.org): what is here, and where. */
export function renderLlmsTxt(input: AgentFilesInput): string {
  const products = input.brands.reduce((n, b) => n + b.product_count, 0);
  const { feedsUrl } = input;
  const lines = [
    `# ${label(input.storeName)}`,
    '',
    `> The product catalogue of ${label(input.storeName)}: ${input.brands.length} brands and ${products} products, published for agents as ACP product feeds and a UCP catalog (search and lookup over REST and MCP).`,
    '',
    '## Discovery',
    '',
    `- [Registry index](${feedsUrl}/v1/index.json): every brand with its product count and feeds (JSON)`,
    `- [UCP business profile](${feedsUrl}${PROFILE_PATH}): the catalog over REST at ${feedsUrl}${REST_BASE_PATH} and MCP at ${feedsUrl}${MCP_PATH}`,
    `- [Sitemap](${feedsUrl}/sitemap.xml): the home page and every brand page`,
    '',
    '## Brand feeds',
    '',
    ...input.brands.map(
      (b) =>
        `- [${label(b.name)}](${b.feeds.json}): ${b.product_count} products, ACP feed (JSON; NDJSON at ${b.feeds.ndjson})`,
    ),
    '',
  ];
  return lines.join('\n');
}

/** Writes the root files; returns the ones whose content changed. */
export async function publishAgentFiles(
  publisher: Publisher,
  input: AgentFilesInput,
): Promise<string[]> {
  const files: [string, string][] = [
    [PROFILE_FILE, businessProfileJson(input.feedsUrl)],
    ['robots.txt', renderRobotsTxt(input.feedsUrl)],
    ['sitemap.xml', renderSitemap(input)],
    ['llms.txt', renderLlmsTxt(input)],
  ];
  const changed: string[] = [];
  for (const [file, content] of files) {
    const written = await publisher.write(file, content, {
      gzip: false,
      contentType: ROOT_FILES[file]!.type,
    });
    if (written.changed) changed.push(file);
  }
  return changed;
}
