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
   * What makes a re-import add nothing: the CDN's request id (Cloudflare RayID, CloudFront
   * x-edge-request-id) or a hash of the log line. Null for the server's own log.
   */
  dedupeKey: string | null;
  /** Where it came from: `server`, `nginx`, `cloudflare`, `cloudfront`. */
  source: 'server' | 'nginx' | 'cloudflare' | 'cloudfront';
}
