import { HttpError } from '../net/http-client.js';
import { addressBytes, isRefusedAddress } from '../net/target-guard.js';
import { SourceError, type SourceContext } from '../domain/integrations/source.js';

/**
 * The origin a platform is reached at. A shop domain as merchants give it
 * (`example.myshopify.com`, `shop.example.com:8443`) means HTTPS. A loopback or private
 * address (`127.0.0.1:8080`, `localhost`), which the SSRF guard only lets through with
 * ALLOW_PRIVATE_TARGETS, means plain HTTP: local platforms in tests and development.
 * `settings.scheme` ('http' or 'https') overrides; a full `http(s)://host` is taken as written.
 */
export function platformOrigin(ctx: SourceContext): string {
  const domain = ctx.shopDomain.trim().replace(/\/+$/, '');
  if (/^https?:\/\//i.test(domain)) return domain;
  const scheme = ctx.settings.scheme;
  if (scheme === 'http' || scheme === 'https') return `${scheme}://${domain}`;
  let host: string;
  try {
    host = new URL(`http://${domain}`).hostname;
  } catch {
    throw new SourceError(`"${domain}" is not a host name`, 'invalid');
  }
  return isLocal(host) ? `http://${domain}` : `https://${domain}`;
}

function isLocal(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || (addressBytes(host) !== undefined && isRefusedAddress(host));
}

/**
 * Refuses to send credentials over plain HTTP to anything but a loopback or private address
 * (which the SSRF guard only lets through with ALLOW_PRIVATE_TARGETS, i.e. local tests): a
 * token or consumer secret on the open internet in clear text is not something we do.
 */
export function assertSecureForCredentials(origin: string): void {
  const url = new URL(origin);
  if (url.protocol === 'https:') return;
  if (isLocal(url.hostname)) return;
  throw new SourceError(
    `credentials are only sent over HTTPS: use https://${url.host} as the shop domain`,
    'invalid',
  );
}

/** An HTTP failure as a SourceError (a refused target is a settings problem). */
export function asSourceError(err: unknown): Error {
  if (err instanceof SourceError) return err;
  if (err instanceof HttpError)
    return new SourceError(
      `cannot reach the platform: ${err.message}`,
      err.code === 'refused' ? 'invalid' : 'unavailable',
    );
  return err as Error;
}
