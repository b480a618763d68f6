/**
 * The events Stripe sends about a `stripe` delivery's imports (`POST
 * /v1/feeds/:id/stripe-events`): thin events (`v2.commerce.product_catalog.imports.processing`,
 * `.succeeded`, `.succeeded_with_errors`, `.failed`) naming the import in `related_object`.
 * Stripe's signature is the only authentication: `Stripe-Signature: t=<unix time>,v1=<hex
 * HMAC-SHA256 of "t.body" with the destination's whsec_ secret>`, compared in constant time,
 * refused more than five minutes from now (Stripe's own tolerance, against replays).
 *
 * A thin event carries no state; as Stripe asks, the import is read from the API, and the
 * delivery that made it gets the import's state, counts and refused rows in its `remote`: an
 * import still processing when the delivery was recorded gets its ending. Nothing is sent
 * again and the delivery's status stays as its attempt left it. An event about an import no
 * recent delivery of the feed made is answered 200 and changes nothing, so Stripe does not
 * retry it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { listFeedDeliveryRows } from '../../db/queries/feed-deliveries.js';
import { findFeedById } from '../../db/queries/feeds.js';
import { AppError, notFound } from '../../errors.js';
import type { DeliveryRunner } from './deliveries.js';
import { parseDelivery } from './delivery-schemas.js';

/** Stripe's default tolerance between an event's signing time and its receipt. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;
/** The deliveries an event's import is looked for among, newest first. */
const RECENT_DELIVERIES = 200;

export interface StripeEventResult {
  status: 'recorded' | 'ignored';
  type: string | null;
  import_id: string | null;
  delivery_id: string | null;
}

function unsigned(reason: string): AppError {
  return new AppError('invalid_api_key', `Stripe's signature is ${reason}.`, {
    field: 'Stripe-Signature',
    reason,
  });
}

/**
 * Whether `header` (`t=...,v1=...[,v1=...]`) signs `body` with `secret` within the tolerance
 * of `now`; throws 401 naming what is wrong.
 */
export function checkStripeSignature(
  secret: string,
  header: string | undefined,
  body: Buffer,
  now: Date,
): void {
  if (!header) throw unsigned('missing');
  const parts = header.split(',').map((p) => p.trim().split('='));
  const stamp = parts.find(([k]) => k === 't')?.[1];
  const signatures = parts.filter(([k]) => k === 'v1').map(([, v]) => v ?? '');
  if (!stamp || !/^\d{1,12}$/.test(stamp) || signatures.length === 0) {
    throw unsigned('malformed (t=<time>,v1=<signature>)');
  }
  if (Math.abs(now.getTime() / 1000 - Number(stamp)) > SIGNATURE_TOLERANCE_SECONDS) {
    throw unsigned('outside the five minutes tolerated');
  }
  const expected = createHmac('sha256', secret).update(`${stamp}.`).update(body).digest();
  const matches = signatures.some((hex) => {
    const given = Buffer.from(hex, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw unsigned('wrong');
}

export async function receiveStripeEvent(
  runner: DeliveryRunner,
  feedId: string,
  signature: string | undefined,
  body: Buffer,
): Promise<StripeEventResult> {
  const { db, now } = runner.env;
  const feed = await findFeedById(db, feedId);
  if (!feed || parseDelivery(feed.delivery).type !== 'stripe') throw notFound('feed', feedId);
  const secret = runner.credentialsOf(feed).webhook_secret;
  if (!secret) throw unsigned('not checkable: the feed has no credentials.webhook_secret');
  checkStripeSignature(secret, signature, body, now());
  let event: { type?: unknown; related_object?: { id?: unknown } | null };
  try {
    event = JSON.parse(body.toString('utf8')) as typeof event;
  } catch {
    throw new AppError('invalid_request', 'The event is not JSON.', {
      field: 'body',
      reason: 'must be JSON',
    });
  }
  const type = typeof event.type === 'string' ? event.type : null;
  const importId = typeof event.related_object?.id === 'string' ? event.related_object.id : null;
  const ignored = { status: 'ignored' as const, type, import_id: importId, delivery_id: null };
  if (!type?.startsWith('v2.commerce.product_catalog.imports.') || !importId) return ignored;
  const rows = await listFeedDeliveryRows(db, feed.id, {}, { limit: RECENT_DELIVERIES, offset: 0 });
  const row = rows.find(
    (r) =>
      r.remote !== null && (JSON.parse(r.remote) as { import_id?: unknown }).import_id === importId,
  );
  if (!row) return ignored;
  await runner.refreshRemote(feed, row);
  return { status: 'recorded', type, import_id: importId, delivery_id: row.id };
}
