/**
 * One request for the discovery tree, wherever it was seen: the discovery server's own log,
 * or a CDN's access log read by `agentshelf analytics import`. The analytics store
 * (domain/analytics/interactions.ts) classifies and records these.
 */
export interface AccessRecord {
  /** When the request was answered (UTC). */
  at: Date;
  method: string;
  /** The path, without the query string, as requested (`/brands/acme/feed.json`). */
  path: string;
  status: number;
  /** Body bytes sent. */
  bytes: number;
  userAgent: string | null;
  /** The `Signature-Agent` header, when the log carries it. */
  signatureAgent?: string | null;
  /**
   * The request's Web Bot Auth signature was checked and held (analytics/web-bot-auth.ts):
   * the server's own requests only; CDN logs carry no signatures.
   */
  verified?: boolean;
  /**
   * What makes a re-import add nothing: the CDN's request id (Cloudflare RayID, CloudFront
   * x-edge-request-id) or a hash of the log line. Null for the server's own log.
   */
  dedupeKey: string | null;
  /**
   * A UCP catalog call (issue 23): the agent profile it names (the `UCP-Agent` header or the
   * MCP call's `meta["ucp-agent"].profile`), null when it names none. Undefined for any other
   * request. A catalog call is an AI interaction whoever makes it.
   */
  ucpAgent?: string | null;
  /** A catalog search with a query: the query and how many products it found. */
  search?: { query: string; results: number };
  /** Where it came from: `server` (discovery server), `export` (feed export), `nginx`, `cloudflare`, `cloudfront`. */
  source: 'server' | 'export' | 'nginx' | 'cloudflare' | 'cloudfront';
}

/** Who made a request (CONTRACT part 9): ai-agents.json, classified by analytics/agents.ts. */
export interface AgentClass {
  /** The agent's name (`GPTBot`); for `bot`, isbot's match; null for people. */
  agent: string | null;
  /** Who runs it (`OpenAI`), when known. */
  operator: string | null;
  /**
   * `assistant`, `search`, `training` and `agent` are AI interactions; `bot` (other crawlers)
   * and `human` are counted apart.
   */
  kind: 'assistant' | 'search' | 'training' | 'agent' | 'bot' | 'human';
  /** A `Signature-Agent` whose HTTP message signature was checked and held. */
  verified: boolean;
}
