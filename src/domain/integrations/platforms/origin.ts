import { addressBytes, isRefusedAddress } from '../../../net/target-guard.js';
import { SourceError, type SourceContext } from '../source.js';

/**
 * The origin a platform is reached at. A shop domain as merchants give it
 * (`example.myshopify.com`) means HTTPS; a full `http(s)://host[:port]` is taken as written
 * (local platforms in tests, a WooCommerce on a non-standard port).
 */
export function platformOrigin(ctx: SourceContext): string {
  const domain = ctx.shopDomain.trim().replace(/\/+$/, '');
  if (/^https?:\/\//i.test(domain)) return domain;
  return `https://${domain}`;
}

/**
 * Refuses to send credentials over plain HTTP to anything but a loopback or private address
 * (which the SSRF guard only lets through with ALLOW_PRIVATE_TARGETS, i.e. local tests): a
 * token or consumer secret on the open internet in clear text is not something we do.
 */
export function assertSecureForCredentials(origin: string): void {
  const url = new URL(origin);
  if (url.protocol === 'https:') return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || (addressBytes(host) !== undefined && isRefusedAddress(host))) return;
  throw new SourceError(
    `credentials are only sent over HTTPS: use https://${url.host} as the shop domain`,
    'invalid',
  );
}
