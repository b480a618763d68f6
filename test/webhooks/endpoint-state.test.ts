import t from 'tap';
import {
  opensslHmac,
  opensslStandardSignature,
  startReceiver,
  waitUntil,
} from '../support/receiver.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

const FAST = { ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05' };
const HOUR = 60 * 60 * 1000;

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2026-11-21T10:00:00.000Z')) {
  let at = start;
  return { now: () => new Date(at), advance: (ms: number) => (at += ms) };
}

async function webhookOf(s: TestServer, id: string) {
  return (await s.request('GET', `/v1/webhooks/${id}`)).body;
}

t.test('a 410 disables the endpoint: marked endpoint_gone, nothing more is sent', async (t) => {
  const s = await startTestServer(t, FAST);
  const receiver = await startReceiver(t, () => ({ status: 410 }));
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  await s.request('POST', '/v1/products', { body: productBody() });
  const disabled = await waitUntil('the endpoint to be disabled', async () => {
    const w = await webhookOf(s, hook.body.id);
    return w.status === 'disabled' ? w : undefined;
  });
  t.equal(disabled.disabled_reason, 'endpoint_gone');
  t.match(disabled.disabled_at, /Z$/);
  await s.request('POST', '/v1/products', { body: productBody() });
  await new Promise((r) => setTimeout(r, 400));
  t.equal(receiver.requests.length, 1, 'a 410 is not retried and later events are not sent');
  const list = (await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`)).body;
  t.equal(list.deliveries.length, 1, 'events after the 410 are not queued');
  t.match(list.deliveries[0], { status: 'failed', attempts: 1, status_code: 410 });
});

t.test(
  'a receiver that never answers times out, and other endpoints are not delayed',
  async (t) => {
    const s = await startTestServer(t, {
      ...FAST,
      WEBHOOK_TIMEOUT_SECONDS: '2',
      SHUTDOWN_TIMEOUT_MS: '500',
    });
    const silent = await startReceiver(t, () => 'hang');
    const healthy = await startReceiver(t);
    const slow = await s.request('POST', '/v1/webhooks', { body: { url: silent.url } });
    await s.request('POST', '/v1/webhooks', { body: { url: healthy.url } });
    const started = Date.now();
    for (let i = 0; i < 5; i++) await s.request('POST', '/v1/products', { body: productBody() });
    await healthy.waitFor(5);
    // Had the silent endpoint held the healthy one up even once, this would take 2 s or more.
    const elapsed = Date.now() - started;
    t.ok(elapsed < 2_000, `the healthy endpoint got all 5 in ${elapsed} ms, within one timeout`);
    await silent.waitFor(1);
    const [timedOut] = await waitUntil('the timeout to be logged', async () => {
      const res = await s.request('GET', `/v1/webhooks/${slow.body.id}/deliveries?offset=4`);
      return res.body.deliveries[0]?.attempts === 1 ? res.body.deliveries : undefined;
    });
    t.match(timedOut, {
      status: 'pending',
      status_code: null,
      error: 'timed out after 2 s without a complete answer',
    });
    t.ok(timedOut.duration_ms >= 1_950 && timedOut.duration_ms < 4_000);
    t.ok(Date.now() - started >= 1_950, 'the attempt was given its full timeout');
  },
);

t.test('after a rotation both secrets sign for 24 hours, then only the new one', async (t) => {
  const clock = manualClock();
  const s = await startTestServer(t, FAST, { now: clock.now });
  const receiver = await startReceiver(t);
  const oldSecret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
  const hook = await s.request('POST', '/v1/webhooks', {
    body: { url: receiver.url, secret: oldSecret },
  });
  t.notOk('secret' in hook.body, 'a given secret is never echoed');

  const rotated = await s.request('PUT', `/v1/webhooks/${hook.body.id}`, {
    body: { rotate_secret: true },
  });
  t.equal(rotated.status, 200);
  const newSecret: string = rotated.body.secret;
  t.match(newSecret, /^whsec_/);
  t.equal(
    rotated.body.previous_secret_expires_at,
    new Date(clock.advance(0) + 24 * HOUR).toISOString(),
  );
  const shown = await s.request('GET', `/v1/webhooks/${hook.body.id}`);
  t.notOk('secret' in shown.body);
  t.notOk(shown.text.includes(newSecret) || shown.text.includes(oldSecret));

  await s.request('POST', '/v1/products', { body: productBody() });
  const [during] = await receiver.waitFor(1);
  const ts = during!.headers['x-webhook-timestamp'] as string;
  t.equal(ts, String(Math.floor(clock.now().getTime() / 1000)));
  t.equal(
    during!.headers['x-webhook-signature'],
    `${await opensslHmac(newSecret, during!.body)},${await opensslHmac(oldSecret, during!.body)}`,
    'X-Webhook-Signature carries the new signature, then the old',
  );
  t.equal(
    during!.headers['webhook-signature'],
    `${await opensslStandardSignature(newSecret, during!)} ${await opensslStandardSignature(oldSecret, during!)}`,
    'webhook-signature carries the new signature, then the old, space-separated',
  );

  clock.advance(24 * HOUR + 1000);
  await s.request('POST', '/v1/products', { body: productBody() });
  const [, after] = await receiver.waitFor(2);
  t.equal(after!.headers['x-webhook-signature'], await opensslHmac(newSecret, after!.body));
  t.equal(after!.headers['webhook-signature'], await opensslStandardSignature(newSecret, after!));
});

t.test('an endpoint failing for 3 days is disabled and marked failing', async (t) => {
  const clock = manualClock();
  const schedule = Array(40).fill('0.1').join(',');
  const s = await startTestServer(
    t,
    { ...FAST, WEBHOOK_RETRY_SCHEDULE: schedule },
    { now: clock.now },
  );
  const receiver = await startReceiver(t, () => ({ status: 502 }));
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  const firstFailure = clock.now().toISOString();
  await s.request('POST', '/v1/products', { body: productBody({ name: 'First' }) });
  await receiver.waitFor(2);
  t.match(await webhookOf(s, hook.body.id), { status: 'active', failing_since: firstFailure });

  clock.advance(71 * HOUR);
  let seen = receiver.requests.length;
  await receiver.waitFor(seen + 2);
  t.match(await webhookOf(s, hook.body.id), {
    status: 'active',
    failing_since: firstFailure,
    disabled_reason: null,
  });

  clock.advance(HOUR);
  const disabled = await waitUntil('the endpoint to be disabled', async () => {
    const w = await webhookOf(s, hook.body.id);
    return w.status === 'disabled' ? w : undefined;
  });
  t.match(disabled, { disabled_reason: 'failing', disabled_at: clock.now().toISOString() });
  const [paused] = (await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`)).body
    .deliveries;
  t.match(paused, { status: 'pending', next_attempt_at: null }, 'the queue waits, undelivered');
  seen = receiver.requests.length;
  await s.request('POST', '/v1/products', { body: productBody({ name: 'While disabled' }) });
  await new Promise((r) => setTimeout(r, 400));
  t.equal(receiver.requests.length, seen, 'a disabled endpoint gets no attempts');

  // Enabled again: the paused delivery goes at once; events of the pause are skipped.
  receiver.respond = () => ({ status: 200 });
  const enabled = await s.request('PUT', `/v1/webhooks/${hook.body.id}`, {
    body: { status: 'active' },
  });
  t.match(enabled.body, { status: 'active', disabled_reason: null, failing_since: null });
  await s.request('POST', '/v1/products', { body: productBody({ name: 'After' }) });
  await waitUntil('both deliveries', () =>
    receiver.requests.slice(seen).length >= 2 ? true : undefined,
  );
  t.same(
    receiver.requests.slice(seen).map((r) => JSON.parse(r.body).data.name),
    ['First', 'After'],
  );
});

t.test('disabling by PUT pauses an endpoint, and enabling resumes it', async (t) => {
  const s = await startTestServer(t, FAST);
  const receiver = await startReceiver(t);
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  const off = await s.request('PUT', `/v1/webhooks/${hook.body.id}`, {
    body: { status: 'disabled' },
  });
  t.match(off.body, { status: 'disabled', disabled_reason: 'requested' });
  await s.request('POST', '/v1/products', { body: productBody({ name: 'Unseen' }) });
  await s.request('PUT', `/v1/webhooks/${hook.body.id}`, { body: { status: 'active' } });
  await s.request('POST', '/v1/products', { body: productBody({ name: 'Seen' }) });
  const [req] = await receiver.waitFor(1);
  t.equal(JSON.parse(req!.body).data.name, 'Seen');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(receiver.requests.length, 1);
});
