/**
 * The business profile at `/.well-known/ucp` (UCP release 2026-04-08, vendor/ucp): the
 * `dev.ucp.shopping` service over REST (`FEEDS_URL/ucp`) and MCP (`FEEDS_URL/ucp/mcp`), the
 * catalog search and lookup capabilities, no payment handlers (the catalogue sells nothing
 * itself). The discovery server answers it and the pipeline publishes it, from this one module.
 */

export const UCP_VERSION = '2026-04-08';

export const SEARCH_CAPABILITY = 'dev.ucp.shopping.catalog.search';
export const LOOKUP_CAPABILITY = 'dev.ucp.shopping.catalog.lookup';

/** Where the profile is published, relative to PUBLIC_DIR, and its path on the wire. */
export const PROFILE_FILE = '.well-known/ucp';
export const PROFILE_PATH = `/${PROFILE_FILE}`;

/** Where the REST binding and the MCP endpoint are served, under FEEDS_URL. */
export const REST_BASE_PATH = '/ucp';
export const MCP_PATH = '/ucp/mcp';

/**
 * The profile's Cache-Control: UCP asks for `public` and a max-age of at least 60 seconds,
 * never private, no-store or no-cache (overview, Profile Requirements).
 */
export const CACHE_PROFILE = 'public, max-age=300';

const SPEC = `https://ucp.dev/${UCP_VERSION}/specification`;
const SCHEMAS = `https://ucp.dev/${UCP_VERSION}/schemas/shopping`;
const SERVICES = `https://ucp.dev/${UCP_VERSION}/services/shopping`;

/** The business profile as an object. */
export function businessProfile(feedsUrl: string) {
  const service = (transport: 'rest' | 'mcp', endpoint: string, schema: string) => ({
    version: UCP_VERSION,
    spec: `${SPEC}/overview`,
    transport,
    schema: `${SERVICES}/${schema}`,
    endpoint: `${feedsUrl}${endpoint}`,
  });
  return {
    ucp: {
      version: UCP_VERSION,
      services: {
        'dev.ucp.shopping': [
          service('rest', REST_BASE_PATH, 'rest.openapi.json'),
          service('mcp', MCP_PATH, 'mcp.openrpc.json'),
        ],
      },
      capabilities: {
        [SEARCH_CAPABILITY]: [
          {
            version: UCP_VERSION,
            spec: `${SPEC}/catalog/search`,
            schema: `${SCHEMAS}/catalog_search.json`,
          },
        ],
        [LOOKUP_CAPABILITY]: [
          {
            version: UCP_VERSION,
            spec: `${SPEC}/catalog/lookup`,
            schema: `${SCHEMAS}/catalog_lookup.json`,
          },
        ],
      },
      payment_handlers: {},
    },
  };
}

/** The profile as published: pretty JSON with a final newline. */
export function businessProfileJson(feedsUrl: string): string {
  return `${JSON.stringify(businessProfile(feedsUrl), null, 2)}\n`;
}
