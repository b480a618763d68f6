import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { signatureHeaders } from '../../src/domain/webhooks/signature.js';
import {
  opensslHmac,
  startReceiver,
  waitUntil,
  type ReceivedRequest,
} from '../support/receiver.js';
import { productBody, startTestServer, type TestServer } from '../support/server.js';

const FAST = { ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05' };

/** What the `standardwebhooks` library says of a delivery: its parsed payload, or its error. */
function verifyWith(secret: string, req: ReceivedRequest): { ok: true; payload: unknown } | string {
  try {
    return { ok: true, payload: new Webhook(secret).verify(req.body, req.headers as any) };
  } catch (err) {
    return (err as Error).message;
  }
}

async function lastDeliveryOf(s: TestServer, webhookId: string) {
  return waitUntil('the delivery to settle', async () => {
    const res = await s.request('GET', `/v1/webhooks/${webhookId}/deliveries`);
    const [latest] = res.body.deliveries as any[];
    return latest && latest.status !== 'pending' ? latest : undefined;
  });
}

t.test('a receiver verifying with the standardwebhooks library accepts deliveries', async (t) => {
  const s = await startTestServer(t, FAST);
  // The receiver knows the secret only after registration: until then it refuses.
  const known: { secret?: string } = {};
  const receiver = await startReceiver(t, (req) => {
    const verdict = known.secret ? verifyWith(known.secret, req) : 'no secret yet';
    return typeof verdict === 'string' ? { status: 400, body: verdict } : { status: 204 };
  });
  const hook = await s.request('POST', '/v1/webhooks', { body: { url: receiver.url } });
  t.equal(hook.status, 201);
  const secret = (known.secret = hook.body.secret as string);

  const product = await s.request('POST', '/v1/products', { body: productBody() });
  const [req] = await receiver.waitFor(1);
  const verdict = verifyWith(secret, req!);
  t.same(verdict, {
    ok: true,
    payload: { event: 'product.created', data: product.body, timestamp: product.body.created_at },
  });
  t.match(req!.headers['webhook-id'], /^evt_/);
  t.equal(req!.headers['webhook-id'], req!.headers['x-webhook-id']);
  t.equal(req!.headers['webhook-timestamp'], req!.headers['x-webhook-timestamp']);
  t.match(req!.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
  t.match(await lastDeliveryOf(s, hook.body.id), { status: 'succeeded', status_code: 204 });

  const other = new Webhook(`whsec_${Buffer.alloc(32, 9).toString('base64')}`);
  t.throws(() => other.verify(req!.body, req!.headers as any), /No matching signature/);
  t.throws(
    () =>
      new Webhook(secret).verify(
        req!.body.replace('product.created', 'product.deleted'),
        req!.headers as any,
      ),
    /No matching signature/,
    'a changed body does not verify',
  );
  t.throws(
    () =>
      new Webhook(secret).verify(req!.body, {
        ...(req!.headers as any),
        'webhook-id': 'evt_someoneelse',
      }),
    /No matching signature/,
    'the id is signed',
  );
});

t.test('during a rotation a receiver with either secret verifies; then only the new', async (t) => {
  const s = await startTestServer(t, FAST);
  const oldSecret = `whsec_${Buffer.alloc(48, 5).toString('base64')}`;
  const receiver = await startReceiver(t, () => ({ status: 200 }));
  const hook = await s.request('POST', '/v1/webhooks', {
    body: { url: receiver.url, secret: oldSecret },
  });
  t.equal(hook.status, 201);
  const rotated = await s.request('PUT', `/v1/webhooks/${hook.body.id}`, {
    body: { rotate_secret: true },
  });
  const newSecret = rotated.body.secret as string;
  t.match(newSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);

  await s.request('POST', '/v1/products', { body: productBody() });
  const [during] = await receiver.waitFor(1);
  const signatures = (during!.headers['webhook-signature'] as string).split(' ');
  t.equal(signatures.length, 2, 'two signatures, space-separated');
  t.match(verifyWith(newSecret, during!), { ok: true }, 'the new secret verifies');
  t.match(verifyWith(oldSecret, during!), { ok: true }, 'the old secret verifies');
  t.equal(
    (during!.headers['x-webhook-signature'] as string).split(',').length,
    2,
    'X-Webhook-Signature also carries both',
  );

  // A second replacement keeps only the secret it replaces as the previous one.
  const third = `whsec_${Buffer.alloc(24, 6).toString('base64')}`;
  await s.request('PUT', `/v1/webhooks/${hook.body.id}`, { body: { secret: third } });
  await s.request('POST', '/v1/products', { body: productBody() });
  const [, after] = await receiver.waitFor(2);
  t.match(verifyWith(third, after!), { ok: true });
  t.match(verifyWith(newSecret, after!), { ok: true });
  t.equal(verifyWith(oldSecret, after!), 'No matching signature found');
});

t.test('a secret stored before the whsec_ form was required verifies as raw bytes', async (t) => {
  // Such rows exist only from before CONTRACT part 7 fixed the form; the API refuses them now.
  const legacy = 'merchant-chosen-secret-42';
  const body = '{"event":"product.created","data":{},"timestamp":"2026-11-25T00:00:00.000Z"}';
  const headers = signatureHeaders('evt_legacy', body, [legacy], Math.floor(Date.now() / 1000));
  t.same(new Webhook(legacy, { format: 'raw' }).verify(body, headers), JSON.parse(body));
  t.equal(headers['X-Webhook-Signature'], await opensslHmac(legacy, body));
});
