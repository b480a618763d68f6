import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { EVENT_TYPES, recordEvent } from '../../src/domain/events.js';
import {
  opensslHmac,
  opensslStandardSignature,
  startReceiver,
  waitUntil,
  type ReceivedRequest,
} from '../support/receiver.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

const FAST = { ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05' };

async function deliveriesOf(s: TestServer, webhookId: string, query = '') {
  const res = await s.request('GET', `/v1/webhooks/${webhookId}/deliveries${query}`);
  return res.body.deliveries as any[];
}

t.test('a product change is delivered signed: openssl verifies both signatures', async (t) => {
  const s = await startTestServer(t, FAST);
  const receiver = await startReceiver(t);
  const created = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  t.equal(created.status, 201);
  const secret: string = created.body.secret;
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ and the base64 of 32 bytes');

  const product = await s.request('POST', '/v1/products', { body: productBody() });
  const [req] = await receiver.waitFor(1);
  t.equal(req!.method, 'POST');
  t.equal(req!.path, '/hook');
  t.equal(req!.headers['content-type'], 'application/json');
  t.match(req!.headers['user-agent'], /^agentshelf\/\d+\.\d+\.\d+$/);
  const body = JSON.parse(req!.body);
  t.same(Object.keys(body), ['event', 'data', 'timestamp']);
  t.equal(body.event, 'product.created');
  t.same(body.data, product.body);
  t.equal(body.timestamp, product.body.created_at, 'timestamp is when the event happened');
  t.match(req!.headers['x-webhook-id'], /^evt_/);

  t.equal(req!.headers['x-webhook-signature'], await opensslHmac(secret, req!.body));
  t.not(req!.headers['x-webhook-signature'], await opensslHmac(`${secret}x`, req!.body));
  const ts = req!.headers['x-webhook-timestamp'] as string;
  t.match(ts, /^\d{10}$/);
  t.ok(Math.abs(Number(ts) - Date.now() / 1000) < 60, 'the timestamp is the time of the attempt');
  t.equal(req!.headers['webhook-id'], req!.headers['x-webhook-id']);
  t.equal(req!.headers['webhook-timestamp'], ts);
  t.equal(req!.headers['webhook-signature'], await opensslStandardSignature(secret, req!));
  // Another key: one character changed mid-string (each carries 6 whole bits of the key; the
  // last characters before the padding carry fewer, so changing one may leave the key as it was).
  const at = secret.length - 10;
  const otherSecret = `${secret.slice(0, at)}${secret[at] === 'A' ? 'B' : 'A'}${secret.slice(at + 1)}`;
  t.not(req!.headers['webhook-signature'], await opensslStandardSignature(otherSecret, req!));

  const [delivery] = await waitUntil('the delivery to be logged as succeeded', async () => {
    const list = await deliveriesOf(s, created.body.id);
    return list[0]?.status === 'succeeded' ? list : undefined;
  });
  t.match(delivery, {
    event: 'product.created',
    event_id: req!.headers['x-webhook-id'],
    attempts: 1,
    status_code: 200,
    error: null,
    next_attempt_at: null,
    test: false,
  });
});

t.test(
  'a 500 is retried, then a 200 settles it: the same X-Webhook-Id and body twice',
  async (t) => {
    const s = await startTestServer(t, { ...FAST, WEBHOOK_RETRY_SCHEDULE: '1' });
    const receiver = await startReceiver(t, (_req, i) =>
      i === 0 ? { status: 500, body: 'database down' } : { status: 200 },
    );
    const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
    await s.request('POST', '/v1/products', { body: productBody() });
    await receiver.waitFor(1);
    const failing = await waitUntil('the endpoint to be marked failing', async () => {
      const res = await s.request('GET', `/v1/webhooks/${hook.body.id}`);
      return res.body.failing_since ? res.body : undefined;
    });
    t.equal(failing.status, 'active');
    const [first, second] = await receiver.waitFor(2);
    t.equal(second!.headers['x-webhook-id'], first!.headers['x-webhook-id']);
    t.equal(second!.body, first!.body, 'the same bytes on every attempt');
    t.ok(second!.at - first!.at >= 950, 'the retry waited for the schedule');

    const [listed] = await waitUntil('the retry to be logged', async () => {
      const list = await deliveriesOf(s, hook.body.id);
      return list[0]?.status === 'succeeded' ? list : undefined;
    });
    t.equal(listed.attempts, 2);
    const detail = await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries/${listed.id}`);
    t.match(detail.body.history, [
      {
        attempt: 1,
        trigger: 'schedule',
        status_code: 500,
        error: 'HTTP 500',
        response_body: 'database down',
      },
      { attempt: 2, trigger: 'schedule', status_code: 200, error: null },
    ]);
    t.equal((await s.request('GET', `/v1/webhooks/${hook.body.id}`)).body.failing_since, null);
    t.equal(receiver.requests.length, 2, 'no attempt after the success');
  },
);

t.test('a delivery is given up after the schedule, and the next event goes on', async (t) => {
  const s = await startTestServer(t, FAST);
  const receiver = await startReceiver(t, (req) =>
    JSON.parse(req.body).data.name === 'Doomed' ? { status: 500 } : { status: 204 },
  );
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  await s.request('POST', '/v1/products', { body: productBody({ name: 'Doomed' }) });
  await s.request('POST', '/v1/products', { body: productBody({ name: 'Fine' }) });
  const requests = await receiver.waitFor(5);
  t.same(
    requests.map((r) => JSON.parse(r.body).data.name),
    ['Doomed', 'Doomed', 'Doomed', 'Doomed', 'Fine'],
    'one attempt and three retries, then the next event',
  );
  const list = await waitUntil('both deliveries to settle', async () => {
    const l = await deliveriesOf(s, hook.body.id);
    return l.every((d) => d.status !== 'pending') ? l : undefined;
  });
  t.match(list, [
    { status: 'succeeded', attempts: 1, status_code: 204 },
    { status: 'failed', attempts: 4, status_code: 500, next_attempt_at: null },
  ]);
});

t.test('Retry-After on 429 and 503 is honoured instead of the schedule', async (t) => {
  const s = await startTestServer(t, FAST);
  const answers = [
    { status: 500 },
    { status: 429, headers: { 'Retry-After': '1' } },
    { status: 503, headers: { 'Retry-After': '1' } },
    { status: 200 },
  ];
  const receiver = await startReceiver(t, (_req, i) => answers[i] ?? { status: 200 });
  await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  await s.request('POST', '/v1/products', { body: productBody() });
  const r = await receiver.waitFor(4);
  t.ok(r[1]!.at - r[0]!.at < 900, 'a 500 without Retry-After waits for the schedule (50 ms)');
  t.ok(r[2]!.at - r[1]!.at >= 950, `429 waited ${r[2]!.at - r[1]!.at} ms for Retry-After: 1`);
  t.ok(r[3]!.at - r[2]!.at >= 950, `503 waited ${r[3]!.at - r[2]!.at} ms for Retry-After: 1`);
});

t.test('events reach each endpoint in event order, retries included', async (t) => {
  const s = await startTestServer(t, FAST);
  // Every third request fails: a failed event must be retried before the next one is sent.
  const receiver = await startReceiver(t, (_req, i) => ({ status: i % 3 === 1 ? 500 : 200 }));
  const fast = await startReceiver(t);
  await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  await s.request('POST', '/v1/webhooks', { body: { url: fast.url } });
  for (let i = 0; i < 8; i++) {
    const p = await s.request('POST', '/v1/products', { body: productBody({ name: `P${i}` }) });
    if (i % 2 === 0)
      await s.request('PUT', `/v1/products/${p.body.id}`, { body: { price: i + 1 } });
    if (i % 4 === 0) await s.request('DELETE', `/v1/products/${p.body.id}`);
  }
  const events = await s.server.store.db.selectFrom('events').select('id').orderBy('seq').execute();
  const expected = events.map((e) => e.id);
  t.equal(expected.length, 14);
  await fast.waitFor(14);
  t.same(
    fast.requests.map((r) => r.headers['x-webhook-id']),
    expected,
  );
  await waitUntil('every event to succeed at the failing receiver', () => {
    const ok = new Set(
      receiver.requests.filter((_r, i) => i % 3 !== 1).map((r) => r.headers['x-webhook-id']),
    );
    return ok.size === expected.length;
  });
  const ids = receiver.requests.map((r) => r.headers['x-webhook-id']);
  const collapsed = ids.filter((id, i) => id !== ids[i - 1]);
  t.same(collapsed, expected, 'each event is sent (and retried) before the next one starts');
  t.ok(ids.length > expected.length, 'some attempts failed and were retried');
});

t.test('an endpoint receives only the kinds it lists in events', async (t) => {
  const s = await startTestServer(t, FAST);
  const deletes = await startReceiver(t);
  const changes = await startReceiver(t);
  const all = await startReceiver(t);
  const d = await s.request('POST', '/v1/webhooks', {
    body: { url: deletes.url, events: ['product.deleted'] },
  });
  const c = await s.request('POST', '/v1/webhooks', {
    body: { url: changes.url, events: ['product.created', 'product.updated'] },
  });
  await s.request('POST', '/v1/webhooks', { body: { url: all.url } });
  const p = await s.request('POST', '/v1/products', { body: productBody() });
  await s.request('PUT', `/v1/products/${p.body.id}`, { body: { name: 'New name' } });
  await s.request('DELETE', `/v1/products/${p.body.id}`);
  await all.waitFor(3);
  await changes.waitFor(2);
  await deletes.waitFor(1);
  const kinds = (r: { requests: { body: string }[] }) =>
    r.requests.map((q) => JSON.parse(q.body).event);
  // Each request's delivery id and event id, should one ever come twice: a resend of one
  // delivery (same webhook-id) or two events (two ids) are different bugs.
  const sent = (r: ReceivedRequest[]) =>
    JSON.stringify(r.map((q) => [q.headers['x-webhook-id'], JSON.parse(q.body).id]));
  t.same(kinds(all), ['product.created', 'product.updated', 'product.deleted'], sent(all.requests));
  t.same(kinds(changes), ['product.created', 'product.updated'], sent(changes.requests));
  t.same(kinds(deletes), ['product.deleted'], sent(deletes.requests));
  // Fan-out queues an event for every endpoint at once, so the logs are complete already.
  t.equal((await deliveriesOf(s, d.body.id)).length, 1);
  t.equal((await deliveriesOf(s, c.body.id)).length, 2);
});

t.test('every event kind in the outbox is delivered, whoever recorded it', async (t) => {
  const s = await startTestServer(t, FAST);
  const receiver = await startReceiver(t);
  await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  for (const type of EVENT_TYPES) {
    await recordEvent(s.server.store.db, type, { id: `rec_${type}`, kind: type });
  }
  const requests = await receiver.waitFor(EVENT_TYPES.length);
  t.same(
    requests.map((r) => JSON.parse(r.body)),
    EVENT_TYPES.map((type) => ({
      event: type,
      data: { id: `rec_${type}`, kind: type },
      timestamp: JSON.parse(requests[EVENT_TYPES.indexOf(type)]!.body).timestamp,
    })),
  );
});

t.test('a redirect is not followed: it is a failed attempt', async (t) => {
  const s = await startTestServer(t, FAST);
  const elsewhere = await startReceiver(t);
  const redirecting = await startReceiver(t, () => ({
    status: 302,
    headers: { Location: elsewhere.url },
  }));
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: redirecting.url } });
  await s.request('POST', '/v1/products', { body: productBody() });
  const [failed] = await waitUntil('the delivery to fail for good', async () => {
    const list = await deliveriesOf(s, hook.body.id);
    return list[0]?.status === 'failed' ? list : undefined;
  });
  t.match(failed, { attempts: 4, status_code: 302, error: 'HTTP 302: redirects are not followed' });
  t.equal(redirecting.requests.length, 4);
  t.equal(elsewhere.requests.length, 0, 'the Location was never requested');
});

t.test('the log shows a pending retry with its next attempt, and is paginated', async (t) => {
  const s = await startTestServer(t, { ...FAST, WEBHOOK_RETRY_SCHEDULE: '30' });
  const receiver = await startReceiver(t, () => ({ status: 500 }));
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  for (let i = 0; i < 3; i++) await s.request('POST', '/v1/products', { body: productBody() });
  await receiver.waitFor(1);
  // Newest first: the oldest event, the one being retried, is on the second page.
  const rest = await waitUntil('the first attempt to be logged', async () => {
    const res = await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries?limit=2&offset=2`);
    return res.body.deliveries[0]?.attempts === 1 ? res.body : undefined;
  });
  t.same(rest.pagination, { limit: 2, offset: 2, total: 3, has_more: false });
  const head = rest.deliveries[0];
  t.match(head, { status: 'pending', status_code: 500, error: 'HTTP 500' });
  const wait = Date.parse(head.next_attempt_at) - Date.parse(head.last_attempt_at);
  t.ok(wait >= 29_000 && wait <= 31_000, `next attempt 30 s after the last (${wait} ms)`);
  const first = await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries?limit=2`);
  t.same(first.body.pagination, { limit: 2, offset: 0, total: 3, has_more: true });
  t.match(first.body.deliveries, [
    { status: 'pending', attempts: 0, status_code: null },
    { status: 'pending', attempts: 0, status_code: null },
  ]);
  const failedOnly = await s.request(
    'GET',
    `/v1/webhooks/${hook.body.id}/deliveries?status=failed`,
  );
  t.equal(failedOnly.body.pagination.total, 0);
  const pendingOnly = await s.request(
    'GET',
    `/v1/webhooks/${hook.body.id}/deliveries?status=pending&event=product.created`,
  );
  t.equal(pendingOnly.body.pagination.total, 3);
  t.equal(receiver.requests.length, 1, 'later events wait behind the one being retried');
});

t.test('an https endpoint whose certificate is not trusted fails the attempt', async (t) => {
  const dir = t.testdir({});
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-days',
      '1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  let requests = 0;
  const server = https.createServer(
    { key: fs.readFileSync(key), cert: fs.readFileSync(cert) },
    (_req, res) => {
      requests++;
      res.end();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;

  const s = await startTestServer(t, { ...FAST, WEBHOOK_RETRY_SCHEDULE: '30' });
  const hook = await s.request('POST', '/v1/webhooks', {
    body: { url: `https://127.0.0.1:${port}/hook` },
  });
  await s.request('POST', '/v1/products', { body: productBody() });
  const [delivery] = await waitUntil('the attempt to be logged', async () => {
    const list = await deliveriesOf(s, hook.body.id);
    return list[0]?.attempts === 1 ? list : undefined;
  });
  t.match(delivery, { status: 'pending', status_code: null, error: /self[- ]signed certificate/ });
  t.equal(requests, 0, 'no request is sent over an unverified connection');
});
