/**
 * The catalogue's URL rules, in one place: what the API accepts, what the ACP registry
 * publishes (normalised), and what a flat feed reader takes as a link (checked as given).
 */

/** An absolute http(s) URL with a host, as the WHATWG parser reads it; else undefined. */
export function parseHttpUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return undefined;
  return url;
}

/** Whether the API takes a value as a URL: an absolute http(s) URL with a host. */
export function isHttpUrl(value: unknown): boolean {
  return parseHttpUrl(value) !== undefined;
}

/**
 * An http(s) URL the WHATWG parser would give back as it is: a test that is sure of it, and
 * says no to much that is also unchanged (those take the parser). A lower-case scheme; a host
 * of lower-case ASCII labels, none empty or punycode (`xn--`, which the parser checks), the
 * last starting with a letter (so not an IPv4 address, which it rewrites); no user, password
 * or port; a path of segments that are not dot segments (`.`, `..`, `%2e`, which it resolves)
 * made of characters it keeps as they are, then the same for a query and a fragment.
 */
const UNCHANGED_HTTP_URL =
  /^https?:\/\/(?:(?!xn--)[a-z0-9-]+\.)*(?!xn--)[a-z][a-z0-9-]*(?:\/(?!\.|%2[eE])[A-Za-z0-9\-._~!$&'()*+,;=:@%]*)+(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@%/?]*)?(?:#[A-Za-z0-9\-._~!$&()*+,;=:@%/?]*)?$/;

/**
 * An absolute http(s) URL in the normalised form the WHATWG parser gives (spaces and quotes
 * percent-encoded), so it is a valid RFC 3986 URI; anything else is dropped. The usual URL is
 * already in that form and is given back without a parse (feeds and the registry normalise
 * every product's page and images).
 */
export function normaliseHttpUrl(value: unknown): string | undefined {
  if (typeof value === 'string' && UNCHANGED_HTTP_URL.test(value)) return value;
  return parseHttpUrl(value)?.href;
}

const LINK = /^https?:\/\/[^\s/?#]+[^\s]*$/i;

/**
 * Whether a feed reader takes a value as it stands as an http(s) link: the scheme, a host,
 * no white space. Feeds publish URLs as given, so they are checked as given (and a regular
 * expression keeps the pipeline's per-product cost low).
 */
export function isLinkAsGiven(value: string): boolean {
  return LINK.test(value);
}
