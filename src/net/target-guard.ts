import dns from 'node:dns';
import net from 'node:net';

/**
 * The SSRF guard for every URL the service calls on a user's behalf (webhook endpoints,
 * integration URLs): only http(s), and no address in a private, loopback, link-local,
 * unique-local, IPv4-mapped or otherwise non-public range unless ALLOW_PRIVATE_TARGETS=true.
 *
 * Checking a URL once is not enough: a name can resolve to a public address at registration
 * and to 127.0.0.1 a minute later (DNS rebinding). So the guard is applied twice: with
 * checkTarget when a URL is accepted, and with guardedLookup on every connection, which
 * checks the very addresses the socket then connects to.
 */

export class TargetRefusedError extends Error {
  /** A few words for an error's `reason`: "resolves to 127.0.0.1, a loopback address". */
  readonly reason: string;
  constructor(reason: string) {
    super(`target refused: ${reason}`);
    this.name = 'TargetRefusedError';
    this.reason = reason;
  }
}

export interface GuardOptions {
  /** ALLOW_PRIVATE_TARGETS: let private and loopback addresses through (tests, intranets). */
  allowPrivate: boolean;
}

type Range = { bytes: number[]; bits: number; label: string };

function range(cidr: string, label: string): Range {
  const [address, bits] = cidr.split('/') as [string, string];
  return { bytes: addressBytes(address)!, bits: Number(bits), label };
}

// Every IPv4 range that is not globally routable unicast (RFC 6890 and friends).
const IPV4_RANGES: Range[] = [
  range('0.0.0.0/8', '"this network" address'),
  range('10.0.0.0/8', 'private address'),
  range('100.64.0.0/10', 'shared (carrier-grade NAT) address'),
  range('127.0.0.0/8', 'loopback address'),
  range('169.254.0.0/16', 'link-local address'),
  range('172.16.0.0/12', 'private address'),
  range('192.0.0.0/24', 'IETF protocol address'),
  range('192.0.2.0/24', 'documentation address'),
  range('192.88.99.0/24', 'reserved address'),
  range('192.168.0.0/16', 'private address'),
  range('198.18.0.0/15', 'benchmarking address'),
  range('198.51.100.0/24', 'documentation address'),
  range('203.0.113.0/24', 'documentation address'),
  range('224.0.0.0/4', 'multicast address'),
  range('240.0.0.0/4', 'reserved address'),
];

const IPV6_RANGES: Range[] = [
  range('::1/128', 'loopback address'),
  range('::ffff:0:0/96', 'IPv4-mapped address'),
  // Also covers :: (unspecified) and the deprecated IPv4-compatible form ::a.b.c.d.
  range('::/96', 'unspecified or IPv4-compatible address'),
  range('64:ff9b:1::/48', 'local-use NAT64 address'),
  range('100::/64', 'discard-only address'),
  range('2001:db8::/32', 'documentation address'),
  range('fc00::/7', 'unique-local address'),
  range('fe80::/10', 'link-local address'),
  range('fec0::/10', 'site-local address'),
  range('ff00::/8', 'multicast address'),
];

// Prefixes that carry an IPv4 address inside: judged by the IPv4 address they lead to.
const NAT64 = range('64:ff9b::/96', 'NAT64');
const SIX_TO_FOUR = range('2002::/16', '6to4');

/** The bytes of an IPv4 or IPv6 address (zone id ignored), or undefined if it is neither. */
export function addressBytes(address: string): number[] | undefined {
  const plain = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(plain);
  if (family === 4) return plain.split('.').map(Number);
  if (family !== 6) return undefined;
  // A dotted IPv4 tail (::ffff:1.2.3.4) is rewritten as two hex groups first.
  const text = plain
    .toLowerCase()
    .replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
      [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)]
        .map((v) => v.toString(16))
        .join(':'),
    );
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.flatMap((g) => {
    const v = parseInt(g, 16);
    return [v >> 8, v & 0xff];
  });
}

function inRange(bytes: number[], r: Range): boolean {
  if (bytes.length !== r.bytes.length) return false;
  let bits = r.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (r.bytes[i]! & mask)) return false;
  }
  return true;
}

/**
 * Why an address may not be called without ALLOW_PRIVATE_TARGETS ("loopback address"), or
 * undefined for a public address. Anything that is not an IP address is refused too.
 */
export function refusedAddressKind(address: string): string | undefined {
  const bytes = addressBytes(address);
  if (!bytes) return 'not an IP address';
  if (bytes.length === 4) return IPV4_RANGES.find((r) => inRange(bytes, r))?.label;
  for (const r of IPV6_RANGES) if (inRange(bytes, r)) return r.label;
  if (inRange(bytes, NAT64)) return refusedAddressKind(bytes.slice(12).join('.'));
  if (inRange(bytes, SIX_TO_FOUR)) return refusedAddressKind(bytes.slice(2, 6).join('.'));
  return undefined;
}

/** True when the address is loopback, private, link-local, unique-local, mapped or reserved. */
export function isRefusedAddress(address: string): boolean {
  return refusedAddressKind(address) !== undefined;
}

function refuseAddress(address: string, name?: string): TargetRefusedError | undefined {
  const kind = refusedAddressKind(address);
  if (!kind) return undefined;
  const what = name ? `${name} resolves to ${address}` : address;
  return new TargetRefusedError(
    `${what}, a ${kind}; set ALLOW_PRIVATE_TARGETS=true to allow private targets`,
  );
}

/** The host of a URL as the socket layer wants it: brackets of an IPv6 literal removed. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Refuses anything but an absolute http(s) URL with a host. */
export function parseTargetUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TargetRefusedError('not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TargetRefusedError(`scheme ${url.protocol.slice(0, -1)} is not http or https`);
  }
  if (!url.hostname) throw new TargetRefusedError('the URL has no host');
  return url;
}

/**
 * Checks a URL before it is stored: scheme, then every address its host resolves to (an IP
 * literal is judged as it is; the URL parser has already turned forms like 2130706433 or
 * 0x7f.1 into dotted quads). Throws TargetRefusedError with the reason.
 */
export async function checkTarget(value: string, options: GuardOptions): Promise<URL> {
  const url = parseTargetUrl(value);
  await checkHost(hostOf(url), options);
  return url;
}

/**
 * Checks a host (a name or an IP literal) as checkTarget checks a URL's: every address it
 * resolves to. For targets that are not URLs (an SFTP server).
 */
export async function checkHost(host: string, options: GuardOptions): Promise<void> {
  if (options.allowPrivate) return;
  if (net.isIP(host)) {
    const refused = refuseAddress(host);
    if (refused) throw refused;
    return;
  }
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new TargetRefusedError(`the host ${host} does not resolve (${code})`);
  }
  for (const { address } of addresses) {
    const refused = refuseAddress(address, host);
    if (refused) throw refused;
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request / net.connect that refuses to connect when the name resolves
 * to any refused address, so the checked addresses are the ones connected to (no window for
 * DNS rebinding). IP literals never reach a lookup: check them with checkAddress first.
 */
export function guardedLookup(options: GuardOptions) {
  return (hostname: string, lookupOptions: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...lookupOptions, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (!options.allowPrivate) {
        for (const { address } of addresses) {
          const refused = refuseAddress(address, hostname);
          if (refused) return callback(Object.assign(refused, { code: 'ETARGETREFUSED' }), []);
        }
      }
      if (lookupOptions.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** Throws TargetRefusedError when an IP-literal host is refused (names go through guardedLookup). */
export function checkAddress(host: string, options: GuardOptions): void {
  if (options.allowPrivate || !net.isIP(host)) return;
  const refused = refuseAddress(host);
  if (refused) throw refused;
}
