import fc from 'fast-check';
import net from 'node:net';
import { pino } from 'pino';
import t from 'tap';
import {
  addressBytes,
  checkTarget,
  isRefusedAddress,
  refusedAddressKind,
} from '../../src/net/target-guard.js';
import { startServer } from '../../src/server.js';
import { startReceiver, waitUntil } from '../support/receiver.js';
import { productBody, startTestServer } from '../support/server.js';

t.test('registration refuses private, loopback and link-local targets by default', async (t) => {
  const s = await startTestServer(t);
  const receiver = await startReceiver(t);
  const cases: [string, RegExp][] = [
    ['http://127.0.0.1:8080/hook', /127\.0\.0\.1, a loopback address/],
    ['http://10.1.2.3/hook', /10\.1\.2\.3, a private address/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254, a link-local address/],
    ['http://[::1]:8080/hook', /::1, a loopback address/],
    [`http://localhost:${receiver.port}/hook`, /localhost resolves to 127\.0\.0\.1, a loopback/],
    ['http://192.168.1.10/', /private address/],
    ['http://172.31.255.255/', /private address/],
    ['https://[fd12:3456::1]/', /unique-local address/],
    ['https://[fe80::1]/', /link-local address/],
    ['http://[::ffff:127.0.0.1]/', /IPv4-mapped address/],
    ['http://[::ffff:8.8.8.8]/', /IPv4-mapped address/],
    ['http://2130706433/', /127\.0\.0\.1, a loopback address/],
    ['http://0x7f.1/', /127\.0\.0\.1, a loopback address/],
    ['http://0.0.0.0:8080/', /"this network" address/],
    ['http://100.64.0.1/', /carrier-grade NAT/],
  ];
  for (const [url, reason] of cases) {
    const res = await s.request('POST', '/v1/webhooks', { body: { url } });
    t.equal(res.status, 422, url);
    t.equal(res.body.error.code, 'invalid_parameter', url);
    t.match(res.body.error.details, /^url: is refused: /, url);
    t.match(res.body.error.details, reason, url);
    t.match(res.body.error.details, /ALLOW_PRIVATE_TARGETS=true/);
  }
  const unresolvable = await s.request('POST', '/v1/webhooks', {
    body: { url: 'http://no-such-host.invalid/hook' },
  });
  t.equal(unresolvable.status, 422);
  t.match(unresolvable.body.error.details, /does not resolve/);
  // A public address passes (no event is recorded, so nothing is ever sent to it).
  const pub = await s.request('POST', '/v1/webhooks', { body: { url: 'https://8.8.8.8/hook' } });
  t.equal(pub.status, 201);
  const moved = await s.request('PUT', `/v1/webhooks/${pub.body.id}`, {
    body: { url: 'http://127.0.0.2/' },
  });
  t.equal(moved.status, 422, 'a PUT to a private URL is refused too');
  t.equal((await s.request('GET', `/v1/webhooks/${pub.body.id}`)).body.url, 'https://8.8.8.8/hook');
});

t.test('delivery refuses a private target too, by literal address and by name', async (t) => {
  // Registered while private targets were allowed, then served with the setting off.
  const allowed = await startTestServer(t, {
    ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '30',
  });
  const receiver = await startReceiver(t);
  const byAddress = await allowed.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  const byName = await allowed.request('POST', '/v1/webhooks', {
    body: { url: `http://localhost:${receiver.port}/hook` },
  });
  t.equal(byName.status, 201, 'allowed with ALLOW_PRIVATE_TARGETS=true');
  await allowed.server.close();

  const server = await startServer(
    { ...allowed.config, ALLOW_PRIVATE_TARGETS: false },
    { logger: pino({ level: 'silent' }) },
  );
  t.teardown(() => server.close());
  const auth = {
    authorization: `Bearer ${allowed.keys.admin}`,
    'content-type': 'application/json',
  };
  await fetch(`${server.url}/v1/products`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify(productBody()),
  });
  const logOf = async (id: string) => {
    const res = await fetch(`${server.url}/v1/webhooks/${id}/deliveries`, { headers: auth });
    const body = (await res.json()) as { deliveries: any[] };
    return body.deliveries[0]?.attempts >= 1 ? body.deliveries[0] : undefined;
  };
  const literal = await waitUntil('the literal-address attempt', () => logOf(byAddress.body.id));
  t.match(literal, {
    status: 'pending',
    status_code: null,
    error: /^target refused: 127\.0\.0\.1, a loopback address/,
  });
  const named = await waitUntil('the named attempt', () => logOf(byName.body.id));
  t.match(named.error, /^target refused: localhost resolves to 127\.0\.0\.1, a loopback address/);
  t.equal(receiver.requests.length, 0, 'no request reached the receiver');
});

t.test('checkTarget allows everything http(s) with allowPrivate, and nothing else', async (t) => {
  const reasonOf = (url: string) =>
    checkTarget(url, { allowPrivate: true }).then(
      () => 'accepted',
      (err: { reason: string }) => err.reason,
    );
  t.equal(await reasonOf('http://127.0.0.1/'), 'accepted');
  t.equal(await reasonOf('https://localhost/'), 'accepted');
  t.equal(await reasonOf('gopher://127.0.0.1/'), 'scheme gopher is not http or https');
  t.equal(await reasonOf('file:///etc/passwd'), 'scheme file is not http or https');
  t.equal(await reasonOf('not a url'), 'not an absolute URL');
});

t.test('addresses embedding IPv4 are judged by the IPv4 address they carry', async (t) => {
  t.equal(refusedAddressKind('64:ff9b::10.0.0.1'), 'private address');
  t.equal(refusedAddressKind('64:ff9b::8.8.8.8'), undefined, 'NAT64 of a public address');
  t.equal(refusedAddressKind('2002:7f00:1::1'), 'loopback address', '6to4 of 127.0.0.1');
  t.equal(refusedAddressKind('2002:808:808::1'), undefined);
  t.equal(refusedAddressKind('::'), 'unspecified or IPv4-compatible address');
  t.equal(refusedAddressKind('2606:4700:4700::1111'), undefined);
  t.equal(refusedAddressKind('fe80::1%eth0'), 'link-local address', 'a zone id is ignored');
  t.equal(refusedAddressKind('example.com'), 'not an IP address');
});

// An independent oracle: Node's own BlockList over the same ranges. Two lists, because a
// BlockList also checks an IPv4 address against IPv6 rules in its mapped form.
const oracle4 = new net.BlockList();
const oracle6 = new net.BlockList();
for (const cidr of [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
]) {
  const [a, bits] = cidr.split('/') as [string, string];
  oracle4.addSubnet(a, Number(bits), 'ipv4');
}
for (const cidr of [
  '::/96',
  '::ffff:0:0/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001:db8::/32',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
]) {
  const [a, bits] = cidr.split('/') as [string, string];
  oracle6.addSubnet(a, Number(bits), 'ipv6');
}

t.test('IPv4 classification agrees with net.BlockList (property)', async (t) => {
  fc.assert(
    fc.property(fc.ipV4(), (ip) => isRefusedAddress(ip) === oracle4.check(ip, 'ipv4')),
    { numRuns: 5000 },
  );
  // Biased towards the edges of the ranges.
  const near = fc.tuple(
    fc.constantFrom(0, 10, 100, 127, 169, 172, 192, 198, 203, 223, 224, 239, 240, 255),
    fc.integer({ min: 0, max: 255 }),
    fc.integer({ min: 0, max: 255 }),
    fc.integer({ min: 0, max: 255 }),
  );
  fc.assert(
    fc.property(near, (parts) => {
      const ip = parts.join('.');
      return isRefusedAddress(ip) === oracle4.check(ip, 'ipv4');
    }),
    { numRuns: 5000 },
  );
  t.pass('agrees');
});

t.test('IPv6 parsing and classification agree with net.BlockList (property)', async (t) => {
  const embeds = (ip: string) => {
    const b = addressBytes(ip)!;
    const isNat64 = b.slice(0, 12).join() === [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0].join();
    if (isNat64) return b.slice(12).join('.');
    if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6).join('.');
    return undefined;
  };
  fc.assert(
    fc.property(fc.ipV6(), (ip) => {
      const v4 = embeds(ip);
      const expected = oracle6.check(ip, 'ipv6') || (v4 !== undefined && oracle4.check(v4, 'ipv4'));
      return isRefusedAddress(ip) === expected;
    }),
    { numRuns: 5000 },
  );
  fc.assert(
    fc.property(fc.ipV4(), (v4) => isRefusedAddress(`::ffff:${v4}`)),
    { numRuns: 1000 },
  );
  t.pass('agrees');
});
