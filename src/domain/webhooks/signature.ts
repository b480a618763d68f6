import { createHmac } from 'node:crypto';
import { randomBase62 } from '../../ids.js';

/** How long the secret before a rotation keeps signing, beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A new signing secret: `whsec_` and 32 base62 characters (about 190 bits). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBase62(32)}`;
}

/** Hex HMAC-SHA256 of a message; the key is the whole secret string, prefix included. */
export function hmacHex(secret: string, message: string): string {
  return createHmac('sha256', secret).update(message).digest('hex');
}

/**
 * The secrets that sign a delivery now: the current one, and the one before the last
 * rotation while its 24 hours of overlap last.
 */
export function signingSecrets(
  webhook: {
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: string | null;
  },
  now: Date,
): string[] {
  const previousValid =
    webhook.previous_secret !== null &&
    webhook.previous_secret_expires_at !== null &&
    Date.parse(webhook.previous_secret_expires_at) > now.getTime();
  return previousValid ? [webhook.secret, webhook.previous_secret!] : [webhook.secret];
}

/**
 * The body of a delivery, `{event, data, timestamp}` (SPEC part 2). `data` is the event's
 * JSON text as recorded, spliced in rather than parsed and re-serialised, so every retry
 * sends the same bytes and the worker spends no time on it.
 */
export function buildDeliveryBody(event: string, dataJson: string, timestamp: string): string {
  return `{"event":${JSON.stringify(event)},"data":${dataJson},"timestamp":${JSON.stringify(timestamp)}}`;
}

/**
 * The signature headers of one attempt (CONTRACT part 7):
 * - `X-Webhook-Signature`: hex HMAC-SHA256 of the raw body, one per signing secret, newest
 *   first, comma-separated (a single value outside a rotation's 24 hours);
 * - `X-Webhook-Timestamp`: Unix seconds of this attempt;
 * - `Webhook-Signature`: `t=<timestamp>,v1=<hex HMAC of "<timestamp>.<body>">`, one `v1=`
 *   per signing secret (the ACP / Stripe form: a receiver can refuse old timestamps).
 */
export function signatureHeaders(
  body: string,
  secrets: string[],
  timestampSeconds: number,
): Record<string, string> {
  const t = String(timestampSeconds);
  return {
    'X-Webhook-Signature': secrets.map((s) => hmacHex(s, body)).join(','),
    'X-Webhook-Timestamp': t,
    'Webhook-Signature': [`t=${t}`, ...secrets.map((s) => `v1=${hmacHex(s, `${t}.${body}`)}`)].join(
      ',',
    ),
  };
}
