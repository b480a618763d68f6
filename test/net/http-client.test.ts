import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { createHttpClient, HttpError, type HttpClientOptions } from '../../src/net/http-client.js';
import { startFeedServer } from '../support/feed-server.js';

/** The waits asked of `sleep`, recorded and skipped: no real time passes between attempts. */
function recordedSleep() {
  const waits: number[] = [];
  return {
    waits,
    sleep: async (ms: number) => {
      waits.push(ms);
    },
  };
}

function client(options: Partial<HttpClientOptions> = {}) {
  const { waits, sleep } = recordedSleep();
  return { waits, http: createHttpClient({ allowPrivate: true, sleep, ...options }) };
}

t.test('a plain GET: status, lower-case headers, body, final URL', async (t) => {
  const server = await startFeedServer(t);
  server.set('/a.json', '{"ok":true}');
  const { http } = client();
  const res = await http.request({ url: server.url('/a.json') });
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'application/json');
  t.same(await res.json(), { ok: true });
  t.equal(res.url, server.url('/a.json'));
  server.set('/bad.json', 'not json');
  const bad = await http.request({ url: server.url('/bad.json') });
  await t.rejects(bad.json(), { name: 'HttpError', code: 'bad_json' });
  // A hostile platform's answer nested 100,000 deep is refused before JSON.parse sees it.
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  server.set('/deep.json', `{"data":${nested(100_000)}}`);
  const deep = await http.request({ url: server.url('/deep.json') });
  await t.rejects(deep.json(), {
    name: 'HttpError',
    code: 'bad_json',
    message: 'the answer nests deeper than 256 levels',
  });
  server.set('/deepest.json', `{"data":${nested(255)}, "s": "[[[["}`);
  const deepest = await http.request({ url: server.url('/deepest.json') });
  t.ok(await deepest.json(), '256 levels are read (brackets inside strings do not count)');
});

t.test('private targets are refused, on the first hop and on every redirect', async (t) => {
  const server = await startFeedServer(t);
  server.set('/feed.csv', 'id,title,price\n');
  const { http } = client({ allowPrivate: false });
  await t.rejects(http.request({ url: server.url('/feed.csv') }), {
    name: 'HttpError',
    code: 'refused',
    message: /127\.0\.0\.1, a loopback address; set ALLOW_PRIVATE_TARGETS=true/,
  });
  t.equal(server.count('/feed.csv'), 0, 'no connection was made');
  await t.rejects(http.request({ url: 'file:///etc/passwd' }), {
    code: 'refused',
    message: /scheme file is not http or https/,
  });

  // 127.0.0.1 is trusted here, so the first hop is let through; where it redirects is not.
  const trusting = client({ allowPrivate: false, trustedHosts: ['127.0.0.1'] }).http;
  const ok = await trusting.request({ url: server.url('/feed.csv') });
  t.equal(ok.status, 200, 'a trusted host is reached');
  ok.discard();
  const targets: [string, RegExp][] = [
    // A name that resolves to a loopback address: refused by the guarded lookup.
    [`http://localhost:${server.port}/feed.csv`, /localhost resolves to (127\.0\.0\.1|::1)/],
    // IP literals: refused before any connection.
    [`http://127.0.0.2:${server.port}/feed.csv`, /127\.0\.0\.2, a loopback address/],
    ['http://10.1.2.3/feed.csv', /10\.1\.2\.3, a private address/],
    ['http://[::ffff:127.0.0.1]/feed.csv', /IPv4-mapped address/],
    ['http://169.254.169.254/latest/meta-data/', /link-local address/],
  ];
  for (const [i, [target, reason]] of targets.entries()) {
    server.redirect(`/r${i}`, target);
    await t.rejects(
      trusting.request({ url: server.url(`/r${i}`) }),
      { code: 'refused', message: reason },
      target,
    );
  }
  t.equal(server.count('/feed.csv'), 1, 'no redirect reached the file');
});

t.test('redirects: followed, limited, credentials kept to their origin', async (t) => {
  const server = await startFeedServer(t);
  const other = await startFeedServer(t);
  server.set('/final.csv', 'id\n');
  other.set('/final.csv', 'id\n');
  server.redirect('/one', '/two', 301);
  server.redirect('/two', '/final.csv', 308);
  const { http } = client();
  const res = await http.request({
    url: server.url('/one'),
    headers: { authorization: 'Basic x' },
  });
  t.equal(res.status, 200);
  t.equal(res.url, server.url('/final.csv'), 'the URL that answered');
  t.equal(await res.text(), 'id\n');
  t.equal(server.requests.at(-1)!.headers.authorization, 'Basic x', 'same origin: kept');

  server.redirect('/away', other.url('/final.csv'));
  const away = await http.request({
    url: server.url('/away'),
    headers: { authorization: 'Basic x', 'x-shopify-access-token': 'shpat_1', accept: 'text/csv' },
  });
  t.equal(away.status, 200);
  away.discard();
  const seen = other.requests.at(-1)!.headers;
  t.equal(seen.authorization, undefined, 'another origin: no credentials');
  t.equal(seen['x-shopify-access-token'], undefined);
  t.equal(seen.accept, 'text/csv', 'other headers travel');

  server.redirect('/loop', '/loop');
  await t.rejects(http.request({ url: server.url('/loop') }), {
    code: 'too_many_redirects',
    message: 'more than 5 redirects',
  });
  t.equal(server.count('/loop'), 6);
  const manual = await http.request({ url: server.url('/one'), maxRedirects: 0 });
  t.equal(manual.status, 301, 'maxRedirects 0 answers the 3xx');
  manual.discard();

  server.set('/cached.csv', { body: 'id\n', etag: '"v1"' });
  const notModified = await http.request({
    url: server.url('/cached.csv'),
    headers: { 'if-none-match': '"v1"' },
  });
  t.equal(notModified.status, 304, 'a 304 is an answer, not a redirect');
  notModified.discard();
});

t.test('a 303 answering a POST is followed with a GET and no body', async (t) => {
  const received: { method: string; body: string; type: string | undefined }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ method: req.method!, body, type: req.headers['content-type'] });
      if (req.url === '/submit') res.writeHead(303, { location: '/result' }).end();
      else res.writeHead(200).end('done');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const { http: httpClient } = client();
  const res = await httpClient.request({
    method: 'POST',
    url: `http://127.0.0.1:${port}/submit`,
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
  });
  t.equal(await res.text(), 'done');
  t.same(received, [
    { method: 'POST', body: '{"a":1}', type: 'application/json' },
    { method: 'GET', body: '', type: undefined },
  ]);
});

t.test('the size cap: a declared length over it, or a body that grows past it', async (t) => {
  const server = await startFeedServer(t);
  server.generate('/declared.csv', { bytes: 200_000, declareLength: true });
  server.generate('/streamed.csv', { bytes: 200_000 });
  const { http } = client();
  await t.rejects(http.request({ url: server.url('/declared.csv'), maxBytes: 100_000 }), {
    code: 'too_large',
    message: 'the answer is 200000 bytes, over the 100000-byte cap',
  });
  const res = await http.request({ url: server.url('/streamed.csv'), maxBytes: 100_000 });
  t.equal(res.status, 200, 'the headers arrive');
  await t.rejects(res.text(), {
    code: 'too_large',
    message: 'the answer is over the 100000-byte cap',
  });
  const whole = await http.request({ url: server.url('/streamed.csv'), maxBytes: 200_000 });
  t.equal((await whole.text()).length, 200_000, 'exactly the cap passes');
  t.equal(server.count('/declared.csv') + server.count('/streamed.csv'), 3, 'never retried');
  // A 5xx with a body over the cap is discarded without harm before the retry.
  server.fail('/feed.csv', { status: 500, times: 1, body: 'x'.repeat(50_000) });
  server.set('/feed.csv', 'id\n');
  const after = await http.request({ url: server.url('/feed.csv'), maxBytes: 1000 });
  t.equal(await after.text(), 'id\n');
});

t.test('5xx: retried with exponential backoff, then the answer', async (t) => {
  const server = await startFeedServer(t);
  server.set('/feed.csv', 'id\n');
  server.fail('/feed.csv', { status: 503, times: 3 });
  const retries: string[] = [];
  const { http, waits } = client({ onRetry: (r) => retries.push(`${r.attempt} ${r.reason}`) });
  const res = await http.request({ url: server.url('/feed.csv') });
  t.equal(res.status, 200);
  t.equal(await res.text(), 'id\n');
  t.equal(server.count('/feed.csv'), 4);
  t.same(retries, ['1 HTTP 503', '2 HTTP 503', '3 HTTP 503']);
  // 500 ms doubled per attempt, each with up to 25% jitter either way.
  t.equal(waits.length, 3);
  for (const [i, wait] of waits.entries()) {
    const base = 500 * 2 ** i;
    t.ok(wait >= base * 0.75 && wait <= base * 1.25, `wait ${i + 1}: ${wait} ms near ${base}`);
  }

  server.fail('/down.csv', { status: 502 });
  const down = await http.request({ url: server.url('/down.csv'), attempts: 3 });
  t.equal(down.status, 502, 'after the last attempt, the failure is the answer');
  down.discard();
  t.equal(server.count('/down.csv'), 3);

  server.fail('/post', { status: 503 });
  const post = await http.request({ method: 'POST', url: server.url('/post'), body: '{}' });
  t.equal(post.status, 503, 'a POST is not retried unless asked');
  post.discard();
  t.equal(server.count('/post'), 1);
  const retried = await http.request({
    method: 'POST',
    url: server.url('/post'),
    body: '{}',
    retry: true,
    attempts: 2,
  });
  retried.discard();
  t.equal(server.count('/post'), 3, 'retry: true retries a POST');
});

t.test('429 with Retry-After: waited as asked; a wait too long is the answer', async (t) => {
  const server = await startFeedServer(t);
  server.set('/feed.csv', 'id\n');
  server.fail('/feed.csv', { status: 429, times: 1, retryAfter: '7' });
  const { http, waits } = client();
  const res = await http.request({ url: server.url('/feed.csv') });
  t.equal(res.status, 200);
  res.discard();
  t.same(waits, [7000], 'Retry-After seconds');

  const now = new Date('2026-11-25T12:00:00Z');
  const dated = client({ now: () => now });
  server.fail('/dated.csv', { status: 503, times: 1, retryAfter: 'Wed, 25 Nov 2026 12:00:20 GMT' });
  server.set('/dated.csv', 'id\n');
  (await dated.http.request({ url: server.url('/dated.csv') })).discard();
  t.same(dated.waits, [20_000], 'an HTTP date, against the client clock');

  server.fail('/later.csv', { status: 429, retryAfter: '3600' });
  const later = client();
  const answer = await later.http.request({ url: server.url('/later.csv') });
  t.equal(answer.status, 429);
  t.equal(answer.headers['retry-after'], '3600', 'the caller sees when to come back');
  answer.discard();
  t.equal(server.count('/later.csv'), 1, 'one request, no wait');
  t.same(later.waits, []);
});

t.test('timeouts: no headers in time, or a body that stalls', async (t) => {
  const server = await startFeedServer(t);
  server.hang('/hang.csv');
  const retries: string[] = [];
  const { http, waits } = client({ onRetry: (r) => retries.push(r.reason) });
  await t.rejects(http.request({ url: server.url('/hang.csv'), timeoutMs: 50, attempts: 2 }), {
    code: 'timeout',
    message: 'no answer within 0.05 s',
  });
  t.equal(server.count('/hang.csv'), 2, 'a timeout is retried');
  t.equal(waits.length, 1);
  t.same(retries, ['no answer within 0.05 s']);

  server.set('/stall.csv', 'id,title\n' + 'x,y\n'.repeat(1000));
  server.stall('/stall.csv', 100);
  const res = await http.request({ url: server.url('/stall.csv'), timeoutMs: 50 });
  t.equal(res.status, 200);
  await t.rejects(res.text(), {
    code: 'timeout',
    message: 'the answer stalled: no byte for 0.05 s',
  });
});

t.test('network errors are retried; a stop aborts at once', async (t) => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const { http: httpClient, waits } = client();
  await t.rejects(httpClient.request({ url: `http://127.0.0.1:${port}/` }), {
    code: 'network',
    message: /ECONNREFUSED/,
  });
  t.equal(waits.length, 3, 'four attempts');

  const server = await startFeedServer(t);
  server.hang('/hang.csv');
  const controller = new AbortController();
  const stopping = client({ signal: controller.signal }).http;
  const pending = stopping.request({ url: server.url('/hang.csv') });
  controller.abort();
  await t.rejects(pending, { code: 'aborted' });
  await t.rejects(stopping.request({ url: server.url('/hang.csv') }), {
    code: 'aborted',
    message: 'stopped before the request was sent',
  });
});

t.test('a body left early closes its connection', async (t) => {
  const server = await startFeedServer(t);
  server.generate('/big.csv', { bytes: 20 * 1024 * 1024 });
  const { http } = client();
  const res = await http.request({ url: server.url('/big.csv') });
  for await (const chunk of res.body) {
    t.ok((chunk as Buffer).length > 0);
    break;
  }
  t.equal(await server.requests[0]!.closed, false, 'the server saw the connection go early');
  // The next request works (the pool does not hand out the half-read socket).
  server.set('/small.csv', 'id\n');
  const next = await http.request({ url: server.url('/small.csv') });
  t.equal(await next.text(), 'id\n');
  t.equal(await server.requests[1]!.closed, true);
});

t.test('HttpError carries the code and the URL', async (t) => {
  const err = new HttpError('timeout', 'no answer', 'http://x.example/');
  t.equal(err.name, 'HttpError');
  t.equal(err.url, 'http://x.example/');
});
