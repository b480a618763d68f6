/** Where the published registry's files live, relative to PUBLIC_DIR, and their URLs. */

/** Published paths of a brand, relative to PUBLIC_DIR. */
export function brandFiles(slug: string) {
  return {
    json: `v1/brands/${slug}.json`,
    page: `v1/brands/${slug}/index.html`,
    pageDir: `v1/brands/${slug}`,
    feedJson: `v1/feeds/${slug}/products.json`,
    feedNdjson: `v1/feeds/${slug}/products.ndjson`,
    feedDir: `v1/feeds/${slug}`,
  };
}

/** Absolute URLs of a brand under FEEDS_URL. */
export function brandUrls(feedsUrl: string, slug: string) {
  return {
    url: `${feedsUrl}/v1/brands/${slug}`,
    html_url: `${feedsUrl}/v1/brands/${slug}/`,
    feeds: {
      json: `${feedsUrl}/v1/feeds/${slug}/products.json`,
      ndjson: `${feedsUrl}/v1/feeds/${slug}/products.ndjson`,
    },
  };
}

/** Replaced by the pipeline after each publication that changed the tree (never served). */
export const PUBLISHED_MARKER = '.published';
