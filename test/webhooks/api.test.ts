import t from 'tap';
import { opensslHmac, startReceiver, waitUntil } from '../support/receiver.js';
import { productBody, startTestServer } from '../support/server.js';

const FAST = { ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0.05' };

t.test('an endpoint is registered, read, listed, changed and deleted', async (t) => {
  const s = await startTestServer(t, FAST);
  const created = await s.request('POST', '/v1/webhooks', {
    body: { url: 'http://127.0.0.1:9/hook', events: ['product.created', 'feed.published'] },
  });
  t.equal(created.status, 201);
  t.match(created.body.id, /^wh_[A-Za-z0-9]{16}$/);
  t.equal(created.headers.get('location'), `/v1/webhooks/${created.body.id}`);
  t.match(created.body, {
    url: 'http://127.0.0.1:9/hook',
    events: ['product.created', 'feed.published'],
    status: 'active',
    disabled_reason: null,
    failing_since: null,
    previous_secret_expires_at: null,
  });
  t.match(created.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const { secret, ...withoutSecret } = created.body;
  t.match(secret, /^whsec_/);

  const got = await s.request('GET', `/v1/webhooks/${created.body.id}`);
  t.same(got.body, withoutSecret, 'the secret is shown once, at creation');
  const list = await s.request('GET', '/v1/webhooks');
  t.same(list.body.webhooks, [withoutSecret]);
  t.same(list.body.pagination, { limit: 50, offset: 0, total: 1, has_more: false });
  t.notOk(list.text.includes(secret));

  const changed = await s.request('PUT', `/v1/webhooks/${created.body.id}`, {
    body: { url: 'http://127.0.0.1:9/other', events: ['*'] },
  });
  t.equal(changed.status, 200);
  t.match(changed.body, { url: 'http://127.0.0.1:9/other', events: ['*'] });
  t.notOk('secret' in changed.body);
  const same = await s.request('PUT', `/v1/webhooks/${created.body.id}`, { body: {} });
  t.same(same.body, changed.body, 'an empty PUT changes nothing');

  const deleted = await s.request('DELETE', `/v1/webhooks/${created.body.id}`);
  t.equal(deleted.status, 204);
  t.equal(deleted.text, '');
  for (const path of ['', '/deliveries']) {
    const gone = await s.request('GET', `/v1/webhooks/${created.body.id}${path}`);
    t.equal(gone.status, 404);
    t.equal(gone.body.error.code, 'not_found');
  }
  t.equal((await s.request('DELETE', `/v1/webhooks/${created.body.id}`)).status, 404);
});

t.test('a given secret is never echoed, in any response', async (t) => {
  const s = await startTestServer(t, FAST);
  const mine = `whsec_${Buffer.from('merchant-chosen-secret-of-32-byte').toString('base64')}`;
  const created = await s.request('POST', '/v1/webhooks', {
    body: { url: 'http://127.0.0.1:9/hook', secret: mine },
  });
  t.equal(created.status, 201);
  t.notOk('secret' in created.body);
  const replaced = await s.request('PUT', `/v1/webhooks/${created.body.id}`, {
    body: {
      secret: `whsec_${Buffer.from('merchant-chosen-secret-of-32-b-v2').toString('base64')}`,
    },
  });
  t.notOk('secret' in replaced.body);
  t.ok(replaced.body.previous_secret_expires_at, 'a replaced secret starts a rotation window');
  for (const res of [
    created,
    replaced,
    await s.request('GET', `/v1/webhooks/${created.body.id}`),
    await s.request('GET', '/v1/webhooks'),
  ]) {
    t.notOk(res.text.includes(mine), 'the secret appears nowhere');
  }
});

t.test('bad input is refused with 422 naming the field', async (t) => {
  const s = await startTestServer(t, FAST);
  const cases: [string, Record<string, unknown>, string, string][] = [
    ['no url', {}, 'missing_parameter', 'url: is required'],
    [
      'ftp url',
      { url: 'ftp://example.com/x' },
      'invalid_parameter',
      'url: must be an absolute http or https URL',
    ],
    [
      'relative url',
      { url: '/hook' },
      'invalid_parameter',
      'url: must be an absolute http or https URL',
    ],
    [
      'unknown kind',
      { url: 'http://127.0.0.1:9/', events: ['product.exploded'] },
      'invalid_parameter',
      'events[0]: must be one of product.created',
    ],
    [
      'no kinds',
      { url: 'http://127.0.0.1:9/', events: [] },
      'invalid_parameter',
      'events: must have at least 1 items',
    ],
    [
      '* with others',
      { url: 'http://127.0.0.1:9/', events: ['*', 'product.created'] },
      'invalid_parameter',
      'events: must not list "*" beside other kinds',
    ],
    [
      'secret of another form',
      { url: 'http://127.0.0.1:9/', secret: 'my-own-secret-0123456789' },
      'invalid_parameter',
      'secret: must be "whsec_" followed by the standard base64 of 24 to 64 bytes',
    ],
    [
      'secret of too few bytes',
      { url: 'http://127.0.0.1:9/', secret: `whsec_${Buffer.alloc(16, 1).toString('base64')}` },
      'invalid_parameter',
      'secret: must be "whsec_" followed by the standard base64 of 24 to 64 bytes',
    ],
    [
      'secret of too many bytes',
      { url: 'http://127.0.0.1:9/', secret: `whsec_${Buffer.alloc(65, 1).toString('base64')}` },
      'invalid_parameter',
      'secret: must be "whsec_" followed by',
    ],
    [
      'secret in url-safe base64',
      {
        url: 'http://127.0.0.1:9/',
        secret: `whsec_${Buffer.alloc(32, 251).toString('base64url')}`,
      },
      'invalid_parameter',
      'secret: must be "whsec_" followed by',
    ],
    [
      'unknown field',
      { url: 'http://127.0.0.1:9/', retries: 3 },
      'invalid_parameter',
      'retries: is not a known field',
    ],
  ];
  for (const [name, body, code, details] of cases) {
    const res = await s.request('POST', '/v1/webhooks', { body });
    t.equal(res.status, 422, name);
    t.equal(res.body.error.code, code, name);
    t.ok(res.body.error.details.startsWith(details), `${name}: ${res.body.error.details}`);
  }
  const dup = await s.request('POST', '/v1/webhooks', {
    body: { url: 'http://127.0.0.1:9/', events: ['product.created', 'product.created'] },
  });
  t.same(dup.body.events, ['product.created'], 'repeated kinds are kept once');
  const both = await s.request('PUT', `/v1/webhooks/${dup.body.id}`, {
    body: { rotate_secret: true, secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}` },
  });
  t.equal(both.status, 422);
  t.match(both.body.error.details, /^secret: cannot be given together with rotate_secret/);
  const badStatus = await s.request('PUT', `/v1/webhooks/${dup.body.id}`, {
    body: { status: 'paused' },
  });
  t.equal(badStatus.status, 422);
  t.equal((await s.request('GET', '/v1/webhooks?limit=251')).status, 400);
  t.equal((await s.request('GET', '/v1/webhooks/wh_nope/deliveries?status=lost')).status, 400);
});

t.test('read_only keys read endpoints; writing needs read_write', async (t) => {
  const s = await startTestServer(t, FAST);
  const hook = await s.request('POST', '/v1/webhooks', {
    body: { url: 'http://127.0.0.1:9/' },
    key: s.keys.read_write,
  });
  t.equal(hook.status, 201);
  const ro = { key: s.keys.read_only };
  t.equal((await s.request('GET', '/v1/webhooks', ro)).status, 200);
  t.equal((await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`, ro)).status, 200);
  for (const [method, path, body] of [
    ['POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/' }],
    ['PUT', `/v1/webhooks/${hook.body.id}`, { status: 'disabled' }],
    ['DELETE', `/v1/webhooks/${hook.body.id}`, undefined],
    ['POST', `/v1/webhooks/${hook.body.id}/test`, undefined],
  ] as const) {
    const res = await s.request(method, path, { ...ro, body });
    t.equal(res.status, 403, `${method} ${path}`);
  }
  t.equal((await s.request('GET', '/v1/webhooks', { key: null })).status, 401);
});

t.test('an Idempotency-Key replays the first registration, secret included', async (t) => {
  const s = await startTestServer(t, FAST);
  const send = () =>
    s.request('POST', '/v1/webhooks', {
      body: { url: 'http://127.0.0.1:9/' },
      headers: { 'Idempotency-Key': 'register-once' },
    });
  const first = await send();
  const again = await send();
  t.same(again.body, first.body);
  t.equal(again.headers.get('idempotent-replayed'), 'true');
  t.equal((await s.request('GET', '/v1/webhooks')).body.pagination.total, 1);
});

t.test('the test endpoint sends a signed webhook.test now and logs it', async (t) => {
  const s = await startTestServer(t, FAST);
  const receiver = await startReceiver(t);
  const hook = await s.request('POST', '/v1/webhooks', {
    body: { url: receiver.url, events: ['product.deleted'] },
  });
  const sent = await s.request('POST', `/v1/webhooks/${hook.body.id}/test`);
  t.equal(sent.status, 201);
  t.match(sent.body, {
    event: 'webhook.test',
    test: true,
    status: 'succeeded',
    attempts: 1,
    status_code: 200,
    error: null,
  });
  t.equal(receiver.requests.length, 1, 'sent before the response, whatever the events filter');
  const [req] = receiver.requests;
  const body = JSON.parse(req!.body);
  t.equal(body.event, 'webhook.test');
  t.equal(body.data.webhook_id, hook.body.id);
  t.equal(req!.headers['x-webhook-id'], sent.body.event_id);
  t.equal(req!.headers['x-webhook-signature'], await opensslHmac(hook.body.secret, req!.body));

  receiver.respond = () => ({ status: 500, body: 'nope' });
  const failed = await s.request('POST', `/v1/webhooks/${hook.body.id}/test`);
  t.equal(failed.status, 201);
  t.match(failed.body, { status: 'failed', status_code: 500, error: 'HTTP 500' });
  const detail = await s.request(
    'GET',
    `/v1/webhooks/${hook.body.id}/deliveries/${failed.body.id}`,
  );
  t.match(detail.body.history, [{ attempt: 1, trigger: 'test', response_body: 'nope' }]);
  t.equal((await s.request('POST', '/v1/webhooks/wh_missing/test')).status, 404);
});

t.test('a failed delivery is sent again by retry, with the same event id', async (t) => {
  const s = await startTestServer(t, FAST);
  const receiver = await startReceiver(t, () => ({ status: 500 }));
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  await s.request('POST', '/v1/products', { body: productBody() });
  const [failed] = await waitUntil('the delivery to fail for good', async () => {
    const res = await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`);
    return res.body.deliveries[0]?.status === 'failed' ? res.body.deliveries : undefined;
  });
  t.equal(failed.attempts, 2);

  const stillFailing = await s.request(
    'POST',
    `/v1/webhooks/${hook.body.id}/deliveries/${failed.id}/retry`,
  );
  t.equal(stillFailing.status, 200);
  t.match(stillFailing.body, { status: 'failed', attempts: 3 });

  receiver.respond = () => ({ status: 200 });
  const retried = await s.request(
    'POST',
    `/v1/webhooks/${hook.body.id}/deliveries/${failed.id}/retry`,
  );
  t.match(retried.body, { id: failed.id, status: 'succeeded', attempts: 4, status_code: 200 });
  const ids = receiver.requests.map((r) => r.headers['x-webhook-id']);
  t.same(new Set(ids).size, 1, 'every attempt carries the same event id');
  t.equal(receiver.requests[3]!.body, receiver.requests[0]!.body, 'and the same body');
  const detail = await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries/${failed.id}`);
  t.same(
    detail.body.history.map((a: any) => a.trigger),
    ['schedule', 'schedule', 'manual', 'manual'],
  );
  const missing = await s.request('POST', `/v1/webhooks/${hook.body.id}/deliveries/dlv_nope/retry`);
  t.equal(missing.status, 404);
});

t.test('retrying the delivery a queue waits on settles it, and the queue moves on', async (t) => {
  const s = await startTestServer(t, { ...FAST, WEBHOOK_RETRY_SCHEDULE: '60' });
  const receiver = await startReceiver(t, () => ({ status: 503 }));
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  await s.request('POST', '/v1/products', { body: productBody({ name: 'Head' }) });
  await s.request('POST', '/v1/products', { body: productBody({ name: 'Behind' }) });
  await receiver.waitFor(1);
  const [, head] = await waitUntil('the head to wait for its retry', async () => {
    const res = await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`);
    return res.body.deliveries[1]?.attempts === 1 ? res.body.deliveries : undefined;
  });
  t.equal(receiver.requests.length, 1, 'the next event waits behind the head (60 s retry)');

  receiver.respond = () => ({ status: 200 });
  const retried = await s.request(
    'POST',
    `/v1/webhooks/${hook.body.id}/deliveries/${head.id}/retry`,
  );
  t.match(retried.body, { status: 'succeeded', attempts: 2, next_attempt_at: null });
  const [, , behind] = await receiver.waitFor(3, 30_000);
  t.equal(JSON.parse(behind!.body).data.name, 'Behind', 'the queue went on at once');
  await new Promise((r) => setTimeout(r, 200));
  t.equal(receiver.requests.length, 3, 'the settled head is not sent again');
});
